import { validationFailed } from './error-envelope';

describe('validationFailed', () => {
  it('names each field once, with every problem found for it once, in the order found', () => {
    const error = validationFailed([
      { field: 'nodes.0.labels.fleet/mode', problems: ['must be a Kubernetes label key'] },
      { field: 'nodes.0.hostname', problems: ['appears twice in this report'] },
      { field: 'nodes.0.labels.fleet/mode', problems: ['must be shared or dedicated'] },
      { field: 'nodes.0.hostname', problems: ['appears twice in this report'] },
    ]);
    expect(error.code).toBe('validation_failed');
    expect(error.details).toEqual({
      fields: [
        {
          field: 'nodes.0.labels.fleet/mode',
          problems: ['must be a Kubernetes label key', 'must be shared or dedicated'],
        },
        { field: 'nodes.0.hostname', problems: ['appears twice in this report'] },
      ],
    });
    expect(error.message).toBe('invalid request: nodes.0.labels.fleet/mode, nodes.0.hostname');
  });
});
