import type { ArgumentMetadata } from '@nestjs/common';
import { ValidationPipe } from '@nestjs/common';
import { getMetadataStorage, ValidationArguments, ValidationTypes } from 'class-validator';
// The storage class-transformer's decorators write to (its cjs build; types under types/).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: import('class-transformer/types/MetadataStorage').MetadataStorage;
};
import { TransformationType } from 'class-transformer';
import { refuseObjectKeys } from './object-keys';

/** `value` is a valid instance of the DTO as plain data: the full pipe would accept it. */
export type FastCheck = (value: unknown) => boolean;

type Rule = {
  readonly property: string;
  readonly optional: boolean;
  readonly tests: ReadonlyArray<(value: unknown, object: object) => boolean>;
};

type Ctor = new () => object;

/**
 * Compiles an accept-only check for a DTO from its class-validator metadata, running each
 * decorator's own constraint (`validate` of the registered constraint class: the very code
 * class-validator runs, so there is nothing to keep in step). Only plain DTOs qualify: every
 * property has only synchronous custom constraints (IsString, IsInt, Min, Max, MaxLength,
 * Matches, IsIn, ...) and at most IsOptional; no nesting, `each`, groups, conditions or
 * class-transformer metadata. Anything else compiles to null and the full pipe does it all.
 */
export const compileFastCheck = (target: Ctor): FastCheck | null => {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(
    target,
    '',
    false,
    false,
    undefined,
  );
  if (metadatas.length === 0) return null;
  if (
    defaultMetadataStorage.getExposedMetadatas(target).length > 0 ||
    defaultMetadataStorage.getExcludedMetadatas(target).length > 0
  ) {
    return null;
  }
  const byProperty = new Map<string, typeof metadatas>();
  for (const m of metadatas) {
    byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  }
  const rules: Rule[] = [];
  for (const [property, list] of byProperty) {
    if (
      defaultMetadataStorage.findTypeMetadata(target, property) ||
      defaultMetadataStorage.findTransformMetadatas(
        target,
        property,
        TransformationType.PLAIN_TO_CLASS,
      ).length > 0
    ) {
      return null;
    }
    let optional = false;
    const tests: Array<(value: unknown, object: object) => boolean> = [];
    for (const m of list) {
      if (m.each || m.always || (m.groups && m.groups.length > 0)) return null;
      if (m.type === ValidationTypes.CONDITIONAL_VALIDATION && m.name === 'isOptional') {
        optional = true;
        continue;
      }
      if (m.type !== ValidationTypes.CUSTOM_VALIDATION) return null;
      const constraints = getMetadataStorage().getTargetValidatorConstraints(m.constraintCls);
      if (constraints.length !== 1 || constraints[0].async) return null;
      const constraint = constraints[0].instance as {
        validate(value: unknown, args: ValidationArguments): unknown;
      };
      const args = m.constraints;
      tests.push(
        (value, object) =>
          constraint.validate(value, {
            value,
            constraints: args,
            targetName: target.name,
            object,
            property,
          }) === true,
      );
    }
    rules.push({ property, optional, tests });
  }
  const known = new Set(rules.map((r) => r.property));
  return (value) => {
    // A parsed JSON object or a query object (Fastify's have a prototype of their own, and a
    // plain object of another realm has another Object.prototype: neither is checked). Keys
    // are walked with for-in, so an enumerable key anywhere on the chain must be known too.
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    if (ArrayBuffer.isView(value) || value instanceof Date) return false;
    const record = value as Record<string, unknown>;
    for (const key in record) if (!known.has(key)) return false;
    for (const rule of rules) {
      const v = record[rule.property];
      if (rule.optional && (v === null || v === undefined)) continue;
      for (const test of rule.tests) if (!test(v, record)) return false;
    }
    return true;
  };
};

/**
 * What a DTO class may add to the pipe, as statics. `fastPath`: a hand-written check where none
 * compiles (nested DTOs: the inventory report, the API's largest body), true only for a body
 * the DTO accepts as it is and that holds no `OBJECT_KEYS` name at any depth. `keepAsSent`:
 * given the body as sent, puts back on the DTO the full path made what class-transformer drops
 * (prototype-named label keys): part of the plain path, not a tuning.
 */
export type DtoStatics<T> = {
  readonly fastPath?: (value: unknown) => value is T;
  readonly keepAsSent?: (sent: unknown) => (dto: T) => void;
};

type Dto = Ctor & DtoStatics<object>;

/**
 * The app's one validation seam. Every body and query is its class-validator DTO: first a field
 * named like an `Object.prototype` member is refused at every depth the DTO shapes
 * (object-keys.ts: class-transformer would drop it without a word), then class-transformer
 * and class-validator decide, naming each bad field. The fast path only saves that work for a
 * value it knows the DTO accepts: the DTO's own `fastPath` (DtoStatics), else a check compiled
 * from a plain DTO's metadata (`compileFastCheck`); anything else, refusals included, takes the full path, so
 * every refusal is the full path's. `fast: false` turns the fast path off: the plain path that
 * the parity specs (`test/validation/fast-validation.unit.spec.ts`, the inventory report's) hold it to.
 */
export class FastValidationPipe extends ValidationPipe {
  private readonly checks = new Map<unknown, FastCheck | null>();
  /** How many values took the fast path (for tests). */
  fastAccepts = 0;

  constructor(
    options: ConstructorParameters<typeof ValidationPipe>[0],
    private readonly fast = true,
  ) {
    super(options);
  }

  /**
   * The value as its DTO, at once, where the fast path knows the DTO accepts it; undefined where
   * the full path must decide (`transform`). Throws the refusal of a prototype-named field.
   */
  validateNow(value: unknown, metadata: ArgumentMetadata): object | undefined {
    const metatype = metadata.metatype as Dto | undefined;
    if (!metatype || (metadata.type !== 'body' && metadata.type !== 'query')) return undefined;
    if (this.fast && metatype.fastPath?.(value)) {
      this.fastAccepts++;
      return value as object;
    }
    refuseObjectKeys(value, metatype);
    if (!this.fast || metatype.fastPath) return undefined;
    let check = this.checks.get(metatype);
    if (check === undefined) {
      check = this.toValidate(metadata) ? compileFastCheck(metatype) : null;
      this.checks.set(metatype, check);
    }
    if (check === null || !check(value)) return undefined;
    this.fastAccepts++;
    return Object.assign(new metatype(), value);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const now = this.validateNow(value, metadata);
    if (now !== undefined) return now;
    // Taken before the full pipe runs: it deletes some of what `keep` puts back.
    const keep = (metadata.metatype as Dto | undefined)?.keepAsSent?.(value);
    const dto = (await super.transform(value, metadata)) as object;
    keep?.(dto);
    return dto;
  }
}
