/**
 * Refusals are typed values. One exception filter maps `code` to the HTTP status of
 * the API contract; nothing else in the code knows about HTTP.
 */
export type DomainErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'unsupported_media';

export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly kind: DomainErrorKind = 'conflict',
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string, id: string): DomainError =>
  new DomainError('not_found', `${what} ${id} does not exist`, 'not_found', { id });

export const invalidTransition = (what: string, from: string, command: string): DomainError =>
  new DomainError('invalid_transition', `${what} in status ${from} cannot ${command}`, 'conflict', {
    from,
    command,
  });

export const forbidden = (message: string): DomainError =>
  new DomainError('forbidden', message, 'forbidden');

/**
 * A store or service the request needs did not answer (Redis down, say). Not a refusal:
 * nothing was done, and the same request may succeed in a moment. HTTP: 503 `unavailable`.
 */
export class UnavailableError extends Error {
  constructor(
    /** What did not answer, as an operator names it, e.g. `heartbeat store (Redis)`. */
    readonly dependency: string,
    override readonly cause: unknown,
  ) {
    super(`${dependency} is not answering: nothing was done, retry shortly`);
    this.name = 'UnavailableError';
  }
}
