import { validationFailed } from '../errors/error-envelope';

/** Deeper than any DTO of the API (an inventory report is four levels), far from stack limits. */
export const MAX_BODY_DEPTH = 32;

const deeper = (value: unknown, depth: number, max: number): boolean => {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= max) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (deeper(value[i], depth + 1, max)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (deeper(record[key], depth + 1, max)) return true;
  return false;
};

/**
 * True when `value` nests objects or arrays deeper than `max`. Recursive but never more than
 * `max` calls deep (it stops at the limit), so any depth of input is safe; no allocation.
 */
export const nestedDeeperThan = (value: unknown, max: number): boolean => deeper(value, 0, max);

/**
 * The refusal of a body nested deeper than `max`, or null. The JSON parser checks every body
 * it parses (json-body.ts), before validation: class-transformer recurses once per level and
 * a body of a few thousand `[` overflowed the stack (a 500).
 */
export const depthRefusal = (value: unknown, max = MAX_BODY_DEPTH): Error | null =>
  nestedDeeperThan(value, max)
    ? validationFailed([{ field: 'body', problems: [`nests deeper than ${max} levels`] }])
    : null;
