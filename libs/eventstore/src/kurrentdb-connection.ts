import { KurrentDBClient } from '@kurrent/kurrentdb-client';

/** The URL schemes the KurrentDB client reads; `esdb` ones are EventStoreDB's older names. */
export const KURRENTDB_SCHEMES = [
  'esdb:',
  'esdb+discover:',
  'kurrentdb:',
  'kurrentdb+discover:',
] as const;

/**
 * The same connection string under the client's current scheme name: the client takes both,
 * but warns on stdout (outside the app's log) at every parse of an `esdb` one.
 */
const currentScheme = (url: string): string =>
  url.replace(/^esdb(\+discover)?:\/\//, (_, discover: string | undefined) =>
    discover ? 'kurrentdb+discover://' : 'kurrentdb://',
  );

/** A client for `url`; throws what the client throws for a string it cannot use. */
export const kurrentDbClient = (url: string): KurrentDBClient =>
  KurrentDBClient.connectionString(currentScheme(url));

/**
 * Why the client cannot use `url`, or undefined when it can. Builds the client as the store
 * will (its parser, its option checks, its certificate files) and drops it: nothing connects
 * before the first request. Only the first line of the client's message is kept, and with
 * credentials in the URL not the part of it the client quotes, so no password is repeated.
 */
export const kurrentDbConnectionProblem = (url: string): string | undefined => {
  let client: KurrentDBClient;
  try {
    client = kurrentDbClient(url);
  } catch (error) {
    let message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    if (url.includes('@')) message = message.replace(/"[^"]*"/g, '…');
    return `the KurrentDB client cannot use it: ${message}`;
  }
  void client.dispose().catch(() => undefined);
  return undefined;
};
