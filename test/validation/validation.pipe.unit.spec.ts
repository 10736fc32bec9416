import 'reflect-metadata';
import { ArgumentMetadata } from '@nestjs/common';
import { DomainError } from '@fleet/kernel';
import { CreateSessionDto } from '../../apps/control-plane/src/sessions/sessions.dto';
import { PageQuery } from '../../apps/control-plane/src/platform/http/page-query.dto';
import { createValidationPipe } from '../../apps/control-plane/src/platform/http/validation.pipe';

const refusal = async (
  pipe: ReturnType<typeof createValidationPipe>,
  value: unknown,
  metatype: ArgumentMetadata['metatype'],
  type: ArgumentMetadata['type'] = 'body',
): Promise<Array<{ field: string; problems: string[] }>> => {
  try {
    await pipe.transform(value, { type, metatype });
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (
      (error as DomainError).details as { fields: Array<{ field: string; problems: string[] }> }
    ).fields;
  }
  throw new Error('not refused');
};

describe.each([
  ['the fast pipe', createValidationPipe()],
  ['the full pipe', createValidationPipe({ fast: false })],
])('validation problems (%s)', (_name, pipe) => {
  it('tells a value of the wrong type only its type, not the bounds it was never compared with', async () => {
    const fields = await refusal(
      pipe,
      { kind: 'gpu', gpuModel: 'L40S', gpuCount: 'two' },
      CreateSessionDto,
    );
    expect(fields).toEqual([{ field: 'gpuCount', problems: [expect.stringMatching(/integer/)] }]);
  });

  it('tells an owner of the wrong type its type, not the owner format', async () => {
    for (const owner of [5, true, ['bob'], { a: 1 }]) {
      const fields = await refusal(
        pipe,
        { kind: 'cpu', cpu: 1, memoryGiB: 1, owner },
        CreateSessionDto,
      );
      expect(fields).toEqual([{ field: 'owner', problems: ['owner must be a string'] }]);
    }
  });

  it('still tells a value of the right type every bound it breaks', async () => {
    const fields = await refusal(
      pipe,
      { kind: 'gpu', gpuModel: 'L40S', gpuCount: 0 },
      CreateSessionDto,
    );
    expect(fields).toEqual([{ field: 'gpuCount', problems: [expect.stringMatching(/1/)] }]);
    const query = await refusal(pipe, { limit: '5000' }, PageQuery, 'query');
    expect(query).toEqual([{ field: 'limit', problems: [expect.stringMatching(/1000/)] }]);
  });
});
