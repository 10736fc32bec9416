import { Client } from 'pg';

/** The URL schemes that select the PostgreSQL event store (libpq takes both). */
export const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'] as const;

export const isPostgresUrl = (url: string): boolean =>
  POSTGRES_SCHEMES.some((scheme) => url.startsWith(`${scheme}//`));

/**
 * The URL as it may appear in a message or a log line: scheme, host, port and database, never
 * the user's password (nor the query, which may carry one as `password=`).
 */
export const describePostgresUrl = (url: string): string => {
  try {
    const parsed = new URL(url);
    const port = parsed.port ? `:${parsed.port}` : '';
    return `${parsed.protocol}//${parsed.hostname}${port}${parsed.pathname}`;
  } catch {
    return 'postgres://(unreadable URL)';
  }
};

/** Every secret `url` carries (its password, a `password=` parameter), to be cut from messages. */
const secretsOf = (url: string): string[] => {
  const secrets: string[] = [];
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
    const inQuery = parsed.searchParams.get('password');
    if (inQuery) secrets.push(inQuery);
  } catch {
    // Not a URL: nothing can be cut out reliably, so the caller drops the whole quote.
  }
  return secrets.filter((s) => s.length > 0);
};

/** `message` with every secret of `url` replaced, for errors that quote what they were given. */
export const redactPostgresSecrets = (url: string, message: string): string => {
  let out = message;
  for (const secret of secretsOf(url)) out = out.split(secret).join('…');
  return out;
};

/**
 * Why node-postgres cannot use `url`, or undefined when it can. The client parses its connection
 * string (and reads the certificate files it names) in its constructor, before connecting, so
 * building one and dropping it checks the URL as the store will read it.
 */
export const postgresConnectionProblem = (url: string): string | undefined => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL node-postgres can read (postgres://user:password@host:5432/database)';
  }
  if (!parsed.hostname && !parsed.searchParams.get('host')) {
    return 'it names no host (postgres://user:password@host:5432/database)';
  }
  try {
    new Client({ connectionString: url });
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    return `node-postgres cannot use it: ${redactPostgresSecrets(url, message)}`;
  }
  return undefined;
};

/**
 * One try at the server (the start's wait for its stores): connects and runs `SELECT 1` within
 * `timeoutMs`, rejecting with the client's own words (refused, no such database, wrong
 * password), never with the password itself.
 */
export const reachPostgres = async (url: string, timeoutMs: number): Promise<void> => {
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  // A failure after connecting also arrives as an event: the rejection below reports it.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const safe = redactPostgresSecrets(url, message);
    throw safe === message ? error : new Error(safe);
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** Failures of the connection rather than of the statement: nothing was done, a retry may work. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|connection timeout|Client has encountered a connection error|Connection closed/i;

export const isPostgresUnavailable = (error: unknown): boolean => {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
  return typeof e?.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message);
};
