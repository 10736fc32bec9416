import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { ClustersModule } from '../../apps/control-plane/src/clusters';
import { NodesModule } from '../../apps/control-plane/src/nodes';
import { PoolsModule } from '../../apps/control-plane/src/pools';
import { SessionsModule } from '../../apps/control-plane/src/sessions';

const COMMAND_HANDLER = '__commandHandler__';
const QUERY_HANDLER = '__queryHandler__';
const INJECTED = 'self:paramtypes';

type Handler = { execute(message: object): Promise<unknown> };
type HandlerClass = new (...args: never[]) => object;

/** Every bus handler of these slices' modules that needs nothing but the command pipeline. */
const pipelineHandlers = (): HandlerClass[] =>
  [ClustersModule, NodesModule, PoolsModule, SessionsModule]
    .flatMap((module) => (Reflect.getMetadata('providers', module) ?? []) as unknown[])
    .filter((provider): provider is HandlerClass => typeof provider === 'function')
    .filter((type) => {
      const handles =
        Reflect.getMetadata(COMMAND_HANDLER, type) ?? Reflect.getMetadata(QUERY_HANDLER, type);
      const deps: Array<{ param: unknown }> = Reflect.getMetadata(INJECTED, type) ?? [];
      return handles && deps.length === 1 && deps[0].param === CommandPipeline;
    });

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
  for (const type of pipelineHandlers())
    add(new (type as unknown as new (p: CommandPipeline) => object)(pipeline));
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
