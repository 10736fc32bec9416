import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { CommandContext, uuidV7 } from '@fleet/kernel';
import { Caller } from '../auth/caller';

/** What the platform hooks attach to a request before a handler runs. */
export type PlatformRequest = {
  caller?: Caller;
  correlationId?: string;
  /** Set from the Idempotency-Key, so a replayed command derives the same event ids. */
  commandId?: string;
  id?: unknown;
};

export const commandContextOf = (request: PlatformRequest, now = new Date()): CommandContext => {
  // Time-ordered (UUIDv7): the event ids derived from it stay local in the event_id index.
  const commandId = request.commandId ?? uuidV7(now.getTime());
  const caller = request.caller;
  return {
    commandId,
    correlationId: request.correlationId ?? commandId,
    causationId: commandId,
    actor: caller ? { sub: caller.sub, roles: caller.roles } : { sub: 'anonymous', roles: [] },
    now,
  };
};

/** The command context of this request: ids, the authenticated actor and the time, decided once. */
export const Ctx = createParamDecorator((_data: unknown, ctx: ExecutionContext) =>
  commandContextOf(ctx.switchToHttp().getRequest<PlatformRequest>()),
);
