/**
 * The embedded heartbeat store's snapshot, one line a node: `nodeId seenAt observedAt\n` (an
 * empty observedAt for none), written into a reused buffer rather than built as strings. A
 * fleet's snapshot every few seconds was 100,000 strings and their join each time, kept alive
 * across the writes' awaits: young objects that outlived a scavenge and were copied, then
 * promoted as garbage to the old generation, under the reports' load.
 */

/** `n` in decimal at `at`, as `String(n)` writes it; the position after it. */
export const writeNumber = (buf: Buffer, at: number, n: number): number => {
  // Epoch milliseconds: a non-negative safe integer, written digit by digit (no string).
  if (!(n >= 0 && Number.isSafeInteger(n))) return at + buf.write(String(n), at, 'latin1');
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = n;
  for (let i = at + digits - 1; i >= at; i--) {
    buf[i] = 48 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
};

const SPACE = 0x20;
const NEWLINE = 0x0a;

/** Room for a line of a node id of `idLength` UTF-16 units: 3 bytes a unit in UTF-8 at most. */
export const lineRoom = (idLength: number): number => idLength * 3 + 2 * 24 + 3;

/** One snapshot line at `at` (`lineRoom` bytes free); the position after it. */
export const writeLine = (
  buf: Buffer,
  at: number,
  nodeId: string,
  seenAt: number,
  observedAt: number | null,
): number => {
  let end = at + buf.write(nodeId, at, 'utf8');
  buf[end++] = SPACE;
  end = writeNumber(buf, end, seenAt);
  buf[end++] = SPACE;
  if (observedAt !== null) end = writeNumber(buf, end, observedAt);
  buf[end++] = NEWLINE;
  return end;
};
