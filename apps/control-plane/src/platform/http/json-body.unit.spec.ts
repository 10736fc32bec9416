import { DomainError } from '@fleet/kernel';
import { bodyRefusal, forbiddenKey, jsonBodyParser } from './json-body';

describe('forbiddenKey', () => {
  it.each([
    ['{"__proto__":{"admin":true}}', '__proto__'],
    ['{"a":1,"nodes":[{"labels":{"__proto__":1}}]}', 'nodes.0.labels.__proto__'],
    ['{"a":{"constructor":{"prototype":{"x":1}}}}', 'a.constructor'],
    ['{"\\u005f_proto__":1}', '__proto__'],
  ])('names the key a poisoning check refuses in %s', (text, path) => {
    expect(forbiddenKey(JSON.parse(text))).toBe(path);
  });

  it.each([
    '{"constructor":1}',
    '{"constructor":{"name":"x"}}',
    '{"prototype":1}',
    '[1,{"a":null}]',
    '3',
  ])('finds nothing in %s', (text) => {
    expect(forbiddenKey(JSON.parse(text))).toBeNull();
  });

  it('walks a body nested deeper than the call stack', () => {
    const depth = 200_000;
    const text = `${'{"a":'.repeat(depth)}{"__proto__":1}${'}'.repeat(depth)}`;
    expect(forbiddenKey(JSON.parse(text))?.endsWith('a.__proto__')).toBe(true);
  });
});

describe('bodyRefusal', () => {
  const fields = (error: DomainError) =>
    (error.details as { fields: Array<{ field: string; problems: string[] }> }).fields;

  it('names the body and says why it is not JSON', () => {
    const error = bodyRefusal('{"kind": "gpu", ');
    expect(error.code).toBe('validation_failed');
    expect(fields(error)).toHaveLength(1);
    expect(fields(error)[0].field).toBe('body');
    expect(fields(error)[0].problems[0]).toMatch(/^not valid JSON: .+/);
  });

  it('names a poisoning key as an unknown field', () => {
    expect(fields(bodyRefusal('{"kind":"cpu","__proto__":{"x":1}}'))).toEqual([
      { field: '__proto__', problems: ['property __proto__ should not exist'] },
    ]);
  });
});

describe('jsonBodyParser', () => {
  const run = (
    body: string,
    parse: (r: null, b: string, done: (e: Error | null, v?: unknown) => void) => void,
  ) =>
    new Promise<[Error | null, unknown]>((resolve) =>
      jsonBodyParser(parse)(null, body, (e, v) => resolve([e, v])),
    );
  const strict = (_: null, b: string, done: (e: Error | null, v?: unknown) => void) => {
    try {
      const v: unknown = JSON.parse(b);
      if (b.includes('__proto__')) throw new Error('poisoned');
      done(null, v);
    } catch {
      done(new Error('Body is not valid JSON'));
    }
  };

  it('reads an empty body as none, without parsing', async () => {
    expect(
      await run('', () => {
        throw new Error('not called');
      }),
    ).toEqual([null, undefined]);
  });

  it.each([
    ['application/json; charset=utf-16', 'utf-16'],
    ['application/json;charset="ISO-8859-1"', 'ISO-8859-1'],
    ['application/json; charset=', ''],
  ])('refuses %s with 415, unread', async (contentType, charset) => {
    const [error] = await new Promise<[Error | null, unknown]>((resolve) =>
      jsonBodyParser(() => {
        throw new Error('not called');
      })({ headers: { 'content-type': contentType } }, '{"a":1}', (e, v) => resolve([e, v])),
    );
    expect(error).toMatchObject({ code: 'unsupported_media_type', kind: 'unsupported_media' });
    expect(error?.message).toContain(`charset ${charset} is not read`);
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF8'])(
    'reads %s',
    async (contentType) => {
      const [error, value] = await new Promise<[Error | null, unknown]>((resolve) =>
        jsonBodyParser((_r: unknown, b: string, done: (e: Error | null, v?: unknown) => void) =>
          done(null, JSON.parse(b)),
        )({ headers: { 'content-type': contentType } }, '{"a":1}', (e, v) => resolve([e, v])),
      );
      expect([error, value]).toEqual([null, { a: 1 }]);
    },
  );

  it('hands on what the parser read', async () => {
    expect(await run('{"a":1}', strict)).toEqual([null, { a: 1 }]);
  });

  it('turns the parser refusal into a 400 naming what is wrong', async () => {
    const [error] = await run('{"__proto__":1}', strict);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).details).toEqual({
      fields: [{ field: '__proto__', problems: ['property __proto__ should not exist'] }],
    });
  });

  it('refuses a body nested deeper than any DTO with a 400 naming the body', async () => {
    const nest = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
    expect(await run(nest(32), strict)).toEqual([null, JSON.parse(nest(32))]);
    const [error] = await run(nest(33), strict);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).details).toEqual({
      fields: [{ field: 'body', problems: ['nests deeper than 32 levels'] }],
    });
  });
});
