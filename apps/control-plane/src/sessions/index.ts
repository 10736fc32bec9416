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
export * from './sessions.messages';
export { SessionsModule } from './sessions.module';
