import { Message } from './messages';

/**
 * One pure decider per aggregate or workflow. `decide` returns no events for a
 * command that changes nothing, and throws a DomainError for one it refuses.
 */
export type Decider<Command extends Message, Event extends Message, State> = {
  readonly decide: (command: Command, state: State) => readonly Event[];
  readonly evolve: (state: State, event: Event) => State;
  readonly initialState: () => State;
};

export const fold = <E extends Message, S>(
  decider: Pick<Decider<Message, E, S>, 'evolve' | 'initialState'>,
  events: readonly E[],
): S => events.reduce(decider.evolve, decider.initialState());

/** Exhaustiveness check for `switch` over a union: a new case cannot be forgotten. */
export const assertNever = (value: never, what = 'value'): never => {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
};
