import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '../../libs/cqrs/src';
import { CLUSTER_HANDLERS } from '../../apps/control-plane/src/clusters/clusters.handlers';
import { NODE_HANDLERS } from '../../apps/control-plane/src/nodes/nodes.handlers';

const COMMAND_HANDLER = '__commandHandler__';
const QUERY_HANDLER = '__queryHandler__';
const INJECTED = 'self:paramtypes';

type Handler = { execute(message: object): Promise<unknown> };
type HandlerClass = abstract new (...args: never[]) => unknown;

/** Every slice's bus handlers that need nothing but the command pipeline. */
const PIPELINE_HANDLERS: readonly HandlerClass[] = [...CLUSTER_HANDLERS, ...NODE_HANDLERS];

/**
 * The CommandBus and QueryBus as a spec without Nest sees them: each message goes to its
 * slice's real handler, built over the spec's pipeline (real or fake). Handlers that need more
 * than the pipeline are passed in built.
 */
export const busesOver = (
  pipeline: CommandPipeline,
  built: readonly object[] = [],
): { commands: CommandBus; queries: QueryBus } => {
  const handlers = new Map<unknown, Handler>();
  const add = (instance: object) => {
    const type = instance.constructor;
    const message =
      Reflect.getMetadata(COMMAND_HANDLER, type) ?? Reflect.getMetadata(QUERY_HANDLER, type);
    handlers.set(message, instance as Handler);
  };
  for (const type of PIPELINE_HANDLERS) {
    const deps: Array<{ param: unknown }> = Reflect.getMetadata(INJECTED, type) ?? [];
    if (deps.length === 1 && deps[0].param === CommandPipeline) {
      add(new (type as unknown as new (p: CommandPipeline) => object)(pipeline));
    }
  }
  built.forEach(add);
  const bus = {
    execute: (message: object) => {
      const handler = handlers.get(message.constructor);
      if (!handler) throw new Error(`no handler in this spec for ${message.constructor.name}`);
      return handler.execute(message);
    },
  };
  return { commands: bus as unknown as CommandBus, queries: bus as unknown as QueryBus };
};
