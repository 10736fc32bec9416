import { createHash, randomUUID } from 'node:crypto';

/** RFC 4122 version-5 style UUID (SHA-1 of namespace + name), deterministic. */
export const uuidFrom = (...parts: readonly string[]): string => {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  const bytes = Buffer.from(hash.subarray(0, 16));
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The id of the i-th event a command appends: a retried command appends nothing new. */
export const eventIdFor = (commandId: string, index: number): string =>
  uuidFrom('event', commandId, String(index));

export const newId = (): string => randomUUID();
