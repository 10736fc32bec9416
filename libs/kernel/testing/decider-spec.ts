import { Decider, DomainError, Message } from '../src';

/**
 * Specifications for deciders: `given(events).when(command).then(events)` or
 * `.thenRefuses(code)`. Pure: no Nest, no I/O.
 */
export const deciderSpec = <C extends Message, E extends Message, S>(
  decider: Decider<C, E, S>,
) => ({
  given: (events: readonly E[] = []) => {
    const state = events.reduce(decider.evolve, decider.initialState());
    return {
      state,
      when: (command: C) => ({
        then: (expected: readonly E[]) => expect(decider.decide(command, state)).toEqual(expected),
        thenEvents: (): readonly E[] => decider.decide(command, state),
        thenNothing: () => expect(decider.decide(command, state)).toEqual([]),
        thenRefuses: (code: string) => {
          let thrown: unknown;
          try {
            decider.decide(command, state);
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(DomainError);
          expect((thrown as DomainError).code).toBe(code);
        },
      }),
    };
  },
});
