import { Message, Workflow } from '../src';

/**
 * Specifications for workflows: `given(inputs).when(input).then(outputs)`, the state folded
 * from what it has seen, or `givenState(state)` for a workflow whose state its saga reads from
 * streams and read models. Pure: no Nest, no I/O.
 */
export const workflowSpec = <I extends Message, O extends Message, S>(
  workflow: Workflow<I, O, S>,
) => {
  const from = (state: S) => ({
    state,
    when: (input: I) => ({
      then: (expected: readonly O[]) => expect(workflow.decide(input, state)).toEqual(expected),
      thenOutputs: (): readonly O[] => workflow.decide(input, state),
      thenNothing: () => expect(workflow.decide(input, state)).toEqual([]),
    }),
  });
  return {
    given: (seen: readonly I[] = []) => from(seen.reduce(workflow.evolve, workflow.initialState())),
    givenState: from,
  };
};
