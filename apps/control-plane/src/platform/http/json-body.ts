import { DomainError } from '@fleet/kernel';
import { validationFailed } from '../errors/error-envelope';
import { depthRefusal } from './body-depth';

type Done = (error: Error | null, body?: unknown) => void;

/**
 * The first key a prototype-poisoning parser refuses: `__proto__` anywhere, or `constructor`
 * holding a `prototype`. Its path as validation names fields (`nodes.0.labels.__proto__`).
 * Iterative: a body may nest deeper than the call stack.
 */
export const forbiddenKey = (value: unknown): string | null => {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const entries = Object.entries(node as Record<string, unknown>);
    for (const [key, inner] of entries) {
      const here = path === '' ? key : `${path}.${key}`;
      if (key === '__proto__') return here;
      if (
        key === 'constructor' &&
        inner !== null &&
        typeof inner === 'object' &&
        Object.prototype.hasOwnProperty.call(inner, 'prototype')
      ) {
        return here;
      }
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i];
      stack.push([inner, path === '' ? key : `${path}.${key}`]);
    }
  }
  return null;
};

/** Why a JSON body was refused, as a 400 naming what to fix. */
export const bodyRefusal = (text: string): DomainError => {
  let parsed: unknown;
  try {
    // Safe here: JSON.parse makes `__proto__` an own key, it sets no prototype.
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'not valid JSON';
    return validationFailed([{ field: 'body', problems: [`not valid JSON: ${reason}`] }]);
  }
  const key = forbiddenKey(parsed);
  if (key === null) {
    return validationFailed([{ field: 'body', problems: ['not valid JSON'] }]);
  }
  const name = key.slice(key.lastIndexOf('.') + 1);
  return validationFailed([{ field: key, problems: [`property ${name} should not exist`] }]);
};

/**
 * The charset a JSON body declares other than UTF-8 (RFC 8259: JSON exchanged between systems
 * is UTF-8), or null. The body is read as UTF-8 whatever it says, so UTF-16 read as garbage.
 */
export const foreignCharset = (contentType: unknown): string | null => {
  // Nearly every request says `application/json` and nothing more: no pattern to run.
  if (typeof contentType !== 'string' || !contentType.includes(';')) return null;
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType)?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset) ? null : charset;
};

/**
 * The application/json parser: Fastify's (its limits and its refusal of prototype poisoning)
 * for the work, ours for the answers. An empty body is no body (clients that label every
 * request JSON, even bodyless commands). A refused body is 400 naming what is wrong: the
 * parse error, the poisoning key as an unknown field (Fastify's says "not valid JSON" for
 * both, with no field), or a nesting deeper than any DTO (body-depth.ts). A body declaring a
 * charset other than UTF-8 is 415: it would be read as UTF-8 all the same.
 */
export const jsonBodyParser =
  <Request>(parse: (request: Request, body: string, done: Done) => void) =>
  (request: Request, body: string | Buffer, done: Done): void => {
    const charset = foreignCharset(
      (request as { headers?: Record<string, unknown> } | null)?.headers?.['content-type'],
    );
    if (charset !== null) {
      return done(
        new DomainError(
          'unsupported_media_type',
          `request bodies are JSON in UTF-8: charset ${charset} is not read`,
          'unsupported_media',
        ),
      );
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') return done(null, undefined);
    parse(request, text, (error, value) =>
      error ? done(bodyRefusal(text)) : done(depthRefusal(value), value),
    );
  };
