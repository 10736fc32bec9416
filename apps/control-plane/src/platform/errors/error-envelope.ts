import { DomainError, DomainErrorKind } from '../../../../../libs/kernel/src';

export type ErrorEnvelope = {
  error: { code: string; message: string; details: Record<string, unknown> };
};

export const STATUS_BY_KIND: Readonly<Record<DomainErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
};

export const envelope = (
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): ErrorEnvelope => ({ error: { code, message, details } });

export const validationFailed = (
  fields: ReadonlyArray<{ field: string; problems: string[] }>,
): DomainError =>
  new DomainError(
    'validation_failed',
    `invalid request: ${fields.map((f) => f.field).join(', ')}`,
    'invalid',
    { fields },
  );
