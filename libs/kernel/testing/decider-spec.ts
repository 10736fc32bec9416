import { Decider, DomainError, Message } from '../src';

/**
 * Specifications for deciders: `given(events).when(command).then(events)` or
 * `.thenRefuses(code, details?)`. Pure: no Nest, no I/O.
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
        /** `details`: the fields a client parses (API.md), compared as a subset. */
        thenRefuses: (code: string, details?: Record<string, unknown>) => {
          let thrown: unknown;
          try {
            decider.decide(command, state);
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(DomainError);
          expect((thrown as DomainError).code).toBe(code);
          if (details) expect((thrown as DomainError).details).toMatchObject(details);
        },
      }),
    };
  },
});
