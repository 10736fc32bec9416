import { hash as digest, randomFillSync } from 'node:crypto';

const hexOf = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** RFC 4122 version-5 style UUID (SHA-1 of namespace + name), deterministic. */
export const uuidFrom = (...parts: readonly string[]): string => {
  // One-shot hash: about a microsecond less than createHash().update().digest() per id.
  const hash = digest('sha1', parts.join('\u0000'), 'buffer');
  const bytes = Buffer.from(hash.subarray(0, 16));
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return hexOf(bytes);
};

// Random bytes drawn 4 KiB at a time (like randomUUID's own cache): one syscall per 512 ids.
const POOL = Buffer.alloc(4096);
let poolAt = POOL.length;
const random8 = (): Buffer => {
  if (poolAt + 8 > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const out = POOL.subarray(poolAt, poolAt + 8);
  poolAt += 8;
  return out;
};

let lastMs = -1;
let counter = 0;

/**
 * RFC 9562 UUIDv7: 48-bit Unix ms timestamp, version 7, a 12-bit counter (rand_a, seeded at
 * random each millisecond, RFC 9562 §6.2 method 1), variant 10, 62 random bits. Ids made by one
 * process sort (as strings and as bytes) in the order they were made: a counter overflow or a
 * clock that steps back borrows the next millisecond instead of going backwards.
 */
export const uuidV7 = (nowMs: number = Date.now()): string => {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    // The top bit stays clear so a millisecond has at least 2048 ids before it overflows.
    counter = random8().readUInt16BE(0) & 0x7ff;
  } else if (++counter > 0xfff) {
    lastMs++;
    counter = random8().readUInt16BE(0) & 0x7ff;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  random8().copy(bytes, 8);
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return hexOf(bytes);
};

/**
 * The id of the i-th event a command appends: a retried command appends nothing new.
 * Its first 8 bytes are the command id's (the timestamp and counter of a UUIDv7 command id), the
 * last 8 a SHA-1 of (commandId, index): deterministic, distinct per index, and time-ordered like
 * the command id, so the event_id index grows at its right edge instead of scattering writes
 * over every page. Version 8 (RFC 9562 custom layout) since half of it is a hash.
 */
export const eventIdFor = (commandId: string, index: number): string => {
  const hash = digest('sha1', `event\u0000${commandId}\u0000${index}`, 'buffer');
  const bytes = Buffer.allocUnsafe(16);
  const prefix = commandId.replace(/-/g, '');
  if (/^[0-9a-f]{16}/i.test(prefix)) bytes.write(prefix.slice(0, 16), 0, 'hex');
  else hash.copy(bytes, 0, 8, 16);
  hash.copy(bytes, 8, 0, 8);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return hexOf(bytes);
};

/** Fresh ids: time-ordered (UUIDv7), so ids written to an index land near each other. */
export const newId = (): string => uuidV7();
