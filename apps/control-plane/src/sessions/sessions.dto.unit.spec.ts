import 'reflect-metadata';
import fc from 'fast-check';
import { plainToInstance } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidationError,
  validateSync,
} from 'class-validator';
import { GPU_MODELS, GpuModel } from '../catalog/catalog';
import { OWNER_FORMAT, OWNER_RULE } from '../platform/auth/caller';
import { compileFastCheck } from '../platform/http/fast-validation';
import { CreateSessionDto } from './sessions.dto';

/** The create DTO as it was written with @ValidateIf: the reference for every refusal. */
class ConditionalCreateSessionDto {
  @IsIn(['gpu', 'cpu'])
  kind!: 'gpu' | 'cpu';

  @ValidateIf((o: ConditionalCreateSessionDto) => o.kind === 'gpu' || o.gpuModel !== undefined)
  @IsIn(GPU_MODELS)
  gpuModel?: GpuModel;

  @ValidateIf((o: ConditionalCreateSessionDto) => o.kind === 'gpu' || o.gpuCount !== undefined)
  @IsInt()
  @Min(1)
  @Max(64)
  gpuCount?: number;

  @ValidateIf((o: ConditionalCreateSessionDto) => o.kind === 'cpu' || o.cpu !== undefined)
  @IsInt()
  @Min(1)
  @Max(1024)
  cpu?: number;

  @ValidateIf((o: ConditionalCreateSessionDto) => o.kind === 'cpu' || o.memoryGiB !== undefined)
  @IsInt()
  @Min(1)
  @Max(16384)
  memoryGiB?: number;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  poolId?: string;

  @IsOptional()
  @IsString()
  @Matches(OWNER_FORMAT, { message: `owner ${OWNER_RULE}` })
  owner?: string;
}

/** What the app's pipe reports: each bad field with its messages, in order. */
const problems = (cls: new () => object, body: Record<string, unknown>) =>
  validateSync(plainToInstance(cls, body), {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  }).map((e: ValidationError) => [e.property, Object.values(e.constraints ?? {})]);

const value = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constantFrom(...GPU_MODELS, 'H100', 'gpu', 'cpu', ''),
  fc.integer({ min: -2, max: 20_000 }),
  fc.constantFrom(0, 1, 64, 65, 1024, 1025, 16384, 16385, 1.5, Number.NaN),
  fc.boolean(),
  fc.string({ maxLength: 3 }),
);

const body = fc
  .record(
    {
      kind: fc.oneof(fc.constantFrom('gpu', 'cpu', 'tpu'), value),
      gpuModel: value,
      gpuCount: value,
      cpu: value,
      memoryGiB: value,
      poolId: value,
      owner: value,
    },
    { requiredKeys: [] },
  )
  .map((b) => b as Record<string, unknown>);

describe('the create-session body', () => {
  it('refuses an empty poolId, naming it (an empty pool is no pool: the session would wait forever)', () => {
    expect(problems(CreateSessionDto, { kind: 'cpu', cpu: 4, memoryGiB: 16, poolId: '' })).toEqual([
      ['poolId', ['poolId must be longer than or equal to 1 characters']],
    ]);
  });

  it('compiles to the fast validation path', () => {
    expect(compileFastCheck(CreateSessionDto)).not.toBeNull();
  });

  it('is refused exactly as the @ValidateIf rules refused it, field by field and message by message', () => {
    fc.assert(
      fc.property(body, (b) => {
        expect(problems(CreateSessionDto, b)).toEqual(problems(ConditionalCreateSessionDto, b));
      }),
      { numRuns: 3000 },
    );
  });

  it('is accepted by the fast path only when the full rules accept it', () => {
    const fast = compileFastCheck(CreateSessionDto)!;
    fc.assert(
      fc.property(body, (b) => {
        if (fast(b)) expect(problems(ConditionalCreateSessionDto, b)).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    [{ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 }, true],
    [{ kind: 'cpu', cpu: 4, memoryGiB: 16, poolId: 'p' }, true],
    [{ kind: 'gpu', gpuModel: 'L40S' }, false],
    [{ kind: 'gpu', gpuModel: 'L40S', gpuCount: null }, false],
    [{ kind: 'cpu', cpu: 4 }, false],
    [{ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, cpu: 0 }, false],
    [{ kind: 'cpu', cpu: 4, memoryGiB: 16, poolId: '' }, false],
    [{ kind: 'cpu', cpu: 4, memoryGiB: 16, poolId: null, owner: null }, true],
  ])('fast path on %j: %s', (b, accepted) => {
    expect(compileFastCheck(CreateSessionDto)!(b)).toBe(accepted);
  });
});
