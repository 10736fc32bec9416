import { Command, Query } from '@nestjs/cqrs';
import { CommandResult } from '../../../../libs/cqrs/src';
import { CommandContext } from '../../../../libs/kernel/src';
import { CommandData as Data, Loaded } from '../platform/bus/messages';
import { SessionCommand } from './session.decider';
import { SessionEvent, SessionState } from './session.events';

/*
 * What other slices ask of a session, on the CommandBus and QueryBus (handlers in
 * sessions.handlers.ts): each command names the session, carries its decider command's data
 * and the context it was issued in.
 */

export type SessionResult = CommandResult<SessionEvent, SessionState>;

/** A cold pause: the running segment closes, its node's cards are released by the reactor. */
export class PauseSession extends Command<SessionResult> {
  constructor(
    readonly sessionId: string,
    readonly data: Data<SessionCommand, 'PauseSession'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A paused session back into the queue (placed at once when something fits). */
export class ResumeSession extends Command<SessionResult> {
  constructor(
    readonly sessionId: string,
    readonly data: Data<SessionCommand, 'ResumeSession'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

export class TerminateSession extends Command<SessionResult> {
  constructor(
    readonly sessionId: string,
    readonly data: Data<SessionCommand, 'TerminateSession'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/**
 * Tries to place a queued session now (placement's steps: allocate on a node, start the
 * session there); answers its state afterwards, running or still queued.
 */
export class TryPlaceSession extends Command<SessionState> {
  constructor(
    readonly sessionId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The node lets go of what it holds for the session (placement's compensation step). */
export class ReleasePlacement extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly sessionId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The session as its stream has it now. */
export class GetSessionState extends Query<Loaded<SessionState>> {
  constructor(readonly sessionId: string) {
    super();
  }
}
