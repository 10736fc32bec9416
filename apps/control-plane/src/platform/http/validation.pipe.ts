import { ValidationError } from '@nestjs/common';
import { FastValidationPipe } from './fast-validation';
import { validationFailed } from '../errors/error-envelope';

/** Constraints on a value's type: when one fails, the value's range or length means nothing. */
const TYPE_CHECKS = new Set(['isInt', 'isNumber', 'isString', 'isBoolean', 'isArray', 'isObject']);

/**
 * A field's problems. A value of the wrong type is told only that ("gpuCount must be an integer
 * number"), not also every bound it could not be compared with ("must not be less than 1").
 */
const problemsOf = (constraints: Record<string, string>): string[] => {
  const wrongType = Object.keys(constraints).filter((k) => TYPE_CHECKS.has(k));
  return (wrongType.length > 0 ? wrongType : Object.keys(constraints)).map((k) => constraints[k]);
};

export const flatten = (
  errors: readonly ValidationError[],
  prefix = '',
): Array<{ field: string; problems: string[] }> =>
  errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    if (!e.constraints) return flatten(e.children ?? [], field);
    // A value of the wrong type has no fields of its own: `nodes: {}` named nodes.hostname.
    const wrongType = Object.keys(e.constraints).some((k) => TYPE_CHECKS.has(k));
    return [
      { field, problems: problemsOf(e.constraints) },
      ...(wrongType ? [] : flatten(e.children ?? [], field)),
    ];
  });

/**
 * Every body and query is a class-validator DTO: unknown fields refused, types and ranges
 * checked, each bad field named in `details.fields`. `fast: false`: without the fast path
 * (fast-validation.ts), for the specs that hold it to the plain path.
 */
export const createValidationPipe = (options: { fast?: boolean } = {}): FastValidationPipe =>
  new FastValidationPipe(
    {
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => validationFailed(flatten(errors)),
    },
    options.fast !== false,
  );
