import { Message } from './messages';

/**
 * A process manager as a pure function pair, like a decider: `decide` turns an input (an event
 * it reacts to, a timer that fired, a tick) and its state into the commands to send, `evolve`
 * folds what it has seen. No Nest, no I/O, no clock: time arrives with the input. A runner in
 * libs/cqrs loads the state, calls `decide` and carries the outputs out.
 */
export type Workflow<Input extends Message, Output extends Message, State> = {
  readonly decide: (input: Input, state: State) => readonly Output[];
  readonly evolve: (state: State, input: Input) => State;
  readonly initialState: () => State;
};
