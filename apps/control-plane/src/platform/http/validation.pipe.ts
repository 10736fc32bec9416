import { ValidationError, ValidationPipe } from '@nestjs/common';
import { FastValidationPipe } from './fast-validation';
import { validationFailed } from '../errors/error-envelope';

const flatten = (
  errors: readonly ValidationError[],
  prefix = '',
): Array<{ field: string; problems: string[] }> =>
  errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = e.constraints ? [{ field, problems: Object.values(e.constraints) }] : [];
    return [...own, ...flatten(e.children ?? [], field)];
  });

/**
 * Every body and query is a class-validator DTO: unknown fields refused, types and ranges
 * checked, each bad field named in `details.fields`.
 */
export const createValidationPipe = (options: { fast?: boolean } = {}): ValidationPipe =>
  new (options.fast === false ? ValidationPipe : FastValidationPipe)({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => validationFailed(flatten(errors)),
  });
