import 'reflect-metadata';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
// Every controller, and so every DTO the API validates, is registered by importing the app.
import '../../app.module';

type Rule = { target: string; property: string; names: Set<string> };

/** Each DTO property's constraint names (`isString`, `matches`, ...), `each` apart. */
const rules = (): Rule[] => {
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<unknown, ValidationMetadata[]>;
  };
  const out = new Map<string, Rule>();
  for (const list of storage.validationMetadatas.values()) {
    for (const m of list) {
      if (m.type !== ValidationTypes.CUSTOM_VALIDATION) continue;
      const constraint = getMetadataStorage().getTargetValidatorConstraints(m.constraintCls)[0];
      const target = typeof m.target === 'function' ? m.target.name : String(m.target);
      const key = `${target}.${m.propertyName}${m.each ? '[]' : ''}`;
      const rule = out.get(key) ?? { target, property: key, names: new Set<string>() };
      rule.names.add(constraint?.name ?? '?');
      out.set(key, rule);
    }
  }
  return [...out.values()];
};

describe('the DTOs the API validates', () => {
  it('are all registered (the scan sees the app)', () => {
    expect(rules().some((r) => r.target === 'CreateSessionDto')).toBe(true);
  });

  // A pattern or length check on a number, a boolean or an object told the caller the
  // pattern ("owner must be 1-256 characters ...") instead of its type.
  it('check a value is a string before its pattern or length', () => {
    const textual = ['matches', 'maxLength', 'minLength', 'length'];
    const unchecked = rules()
      .filter((r) => textual.some((n) => r.names.has(n)) && !r.names.has('isString'))
      .map((r) => r.property);
    expect(unchecked).toEqual([]);
  });
});
