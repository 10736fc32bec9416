import { DomainError, DomainErrorKind } from '@fleet/kernel';

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
  unsupported_media: 415,
};

export const envelope = (
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): ErrorEnvelope => ({ error: { code, message, details } });

export const validationFailed = (
  found: ReadonlyArray<{ field: string; problems: string[] }>,
): DomainError => {
  // One entry per field, in the order first found, with each of its problems once: two checks
  // of one field (a label that is no label key *and* not a mode) are one field with two problems.
  const byField = new Map<string, string[]>();
  for (const { field, problems } of found) {
    const known = byField.get(field) ?? [];
    for (const p of problems) if (!known.includes(p)) known.push(p);
    byField.set(field, known);
  }
  const fields = [...byField].map(([field, problems]) => ({ field, problems }));
  return new DomainError(
    'validation_failed',
    `invalid request: ${fields.map((f) => f.field).join(', ')}`,
    'invalid',
    { fields },
  );
};
