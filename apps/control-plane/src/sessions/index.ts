/** The sessions slice as other slices see it: nothing else of this folder is imported elsewhere. */
export {
  PauseReason,
  Placement,
  SessionEvent,
  SessionState,
  TerminationReason,
  sessionCodec,
  sessionStreamId,
} from './session.events';
export { SessionCommand } from './session.decider';
export { SESSIONS, SessionDoc } from './sessions.projection';
export { SESSIONS_PROJECTION } from './sessions.service';
export { PauseSession } from './pause-session.handler';
export { ResumeSession } from './resume-session.handler';
export { TerminateSession } from './terminate-session.handler';
export { TryPlaceSession } from './try-place-session.handler';
export { ReleasePlacement } from './release-placement.handler';
export { GetSessionState } from './get-session-state.handler';
export { SessionsModule } from './sessions.module';
