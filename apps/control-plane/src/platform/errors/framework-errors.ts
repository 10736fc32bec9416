import type { FastifyError } from 'fastify';
import { envelope } from './error-envelope';

// Structural, so it fits the reply of whichever fastify copy the Nest adapter runs.
type Reply = {
  status(code: number): unknown;
  header(name: string, value: string): unknown;
  send(body: unknown): unknown;
};

/**
 * Errors Fastify's router raises before any hook or Nest filter runs (a malformed URL, a path
 * parameter over the length limit): answered in the error envelope like every other refusal.
 */
export const frameworkErrors = (
  error: FastifyError,
  request: { id: unknown },
  raw: unknown,
): void => {
  const reply = raw as Reply;
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path parameter is longer than any id'
      : 'the URL is not valid';
  reply.status(400);
  reply.header('x-correlation-id', String(request.id));
  reply.send(
    envelope('validation_failed', `invalid request: ${problem}`, {
      fields: [{ field: 'path', problems: [problem] }],
    }),
  );
};
