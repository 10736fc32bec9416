import { getMetadataStorage } from 'class-validator';
// The storage class-transformer's decorators write to (its cjs build; types under types/).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: import('class-transformer/types/MetadataStorage').MetadataStorage;
};
import { validationFailed } from '../errors/error-envelope';

type Ctor = new () => object;

/**
 * Names of `Object.prototype`'s members (`constructor`, `toString`, `hasOwnProperty`,
 * `__proto__`, ...) and `prototype`. class-transformer skips a key whose name is a method or
 * accessor of the object it builds, and the ValidationPipe deletes `constructor` and
 * `prototype`, so such a field was dropped without a word instead of refused as unknown.
 */
export const OBJECT_KEYS: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
]);

/** Deeper than any DTO goes: answered as if it held one (the full walk then decides). */
const SCAN_DEPTH = 32;

/** Whether any own key of `value`, at any depth, free-form maps included, is an OBJECT_KEYS name. */
const holdsObjectKey = (value: unknown, depth: number): boolean => {
  if (value === null || typeof value !== 'object') return false;
  if (depth > SCAN_DEPTH) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsObjectKey(value[i], depth + 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (OBJECT_KEYS.has(key) || holdsObjectKey(record[key], depth + 1)) return true;
  }
  return false;
};

/** Per DTO: its properties holding nested DTOs (`@Type`), each with that DTO. */
const nestedByTarget = new Map<Ctor, ReadonlyMap<string, Ctor>>();

const nestedOf = (target: Ctor): ReadonlyMap<string, Ctor> => {
  let nested = nestedByTarget.get(target);
  if (nested === undefined) {
    const properties = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(target, '', false, false, undefined)
        .map((m) => m.propertyName),
    );
    const map = new Map<string, Ctor>();
    for (const property of properties) {
      const type = defaultMetadataStorage.findTypeMetadata(target, property);
      const dto = type?.typeFunction() as Ctor | undefined;
      if (typeof dto === 'function' && dto !== Object) map.set(property, dto);
    }
    nested = map;
    nestedByTarget.set(target, nested);
  }
  return nested;
};

/**
 * The path of every own key of `value` named like an `OBJECT_KEYS` member, at every depth the
 * DTO `target` gives a shape: the DTO's own level and its nested DTOs (each item of an array
 * of them, `nodes.0.constructor`). A property without a nested DTO is not entered: a free-form
 * map (a node's `labels`) takes any key as data, and any other value holding an object is
 * refused for its type anyway.
 */
export const objectKeyPaths = (value: unknown, target: Ctor, path = ''): string[] => {
  const found: string[] = [];
  const visit = (node: unknown, dto: Ctor, at: string): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const nested = nestedOf(dto);
    for (const key of Object.keys(node)) {
      const here = at === '' ? key : `${at}.${key}`;
      if (OBJECT_KEYS.has(key)) {
        found.push(here);
        continue;
      }
      const inner = nested.get(key);
      if (inner === undefined) continue;
      const v = (node as Record<string, unknown>)[key];
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) visit(v[i], inner, `${here}.${i}`);
      } else {
        visit(v, inner, here);
      }
    }
  };
  visit(value, target, path);
  return found;
};

/**
 * Refuses, before class-transformer sees it, a body or query field named like an object's own
 * machinery (see OBJECT_KEYS): 400 naming each with its path, as for any unknown field.
 */
export const refuseObjectKeys = (value: unknown, target: Ctor): void => {
  // Every body and query passes here: nearly all hold no such key, which a walk that
  // allocates nothing tells; only then are paths worked out against the DTO's shape.
  if (!holdsObjectKey(value, 0)) return;
  const found = objectKeyPaths(value, target);
  if (found.length > 0) {
    throw validationFailed(
      found.map((field) => {
        const name = field.slice(field.lastIndexOf('.') + 1);
        return { field, problems: [`property ${name} should not exist`] };
      }),
    );
  }
};
