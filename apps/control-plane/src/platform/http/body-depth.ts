import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { validationFailed } from '../errors/error-envelope';

/** Deeper than any DTO of the API (an inventory report is four levels), far from stack limits. */
export const MAX_BODY_DEPTH = 32;

/** True when `value` nests objects or arrays deeper than `max`; iterative, so any depth is safe. */
export const nestedDeeperThan = (value: unknown, max: number): boolean => {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
};

/**
 * Refuses a body nested deeper than MAX_BODY_DEPTH before validation runs: class-transformer
 * recurses once per level and a body of a few thousand `[` overflows the stack (a 500).
 */
export const limitBodyDepth = (app: NestFastifyApplication, max = MAX_BODY_DEPTH): void => {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preValidation', async (request) => {
      if (nestedDeeperThan(request.body, max)) {
        throw validationFailed([{ field: 'body', problems: [`nests deeper than ${max} levels`] }]);
      }
    });
};
