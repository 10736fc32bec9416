import { LogPosition } from '@fleet/eventstore/port';

/*
 * Shapes shared by the commands and queries slices send each other on @nestjs/cqrs's
 * CommandBus and QueryBus (each slice declares its own in `<slice>.messages.ts`).
 */

/**
 * What a query for an aggregate's state answers: the state folded from its stream, the
 * stream's revision (null while it does not exist) and the position of its last event.
 */
export type Loaded<S> = {
  readonly state: S;
  readonly revision: number | null;
  readonly position: LogPosition;
};

/** The data of the decider command `T` of the union `C`: what a bus command carries. */
export type CommandData<C extends { type: string; data: unknown }, T extends C['type']> = Extract<
  C,
  { type: T }
>['data'];
