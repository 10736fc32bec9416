import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

import { LogPosition, asLogPosition } from '@fleet/eventstore/port';

const VERSION = 'd1.';
const BLOCK_BYTES = 16;
const NONCE_BYTES = 8;
const TAG_BYTES = 16;
/** The sealed form: `d1.` and base64url of one encrypted block and its tag (32 bytes). */
export const SEALED_CURSOR = /^d1\.[A-Za-z0-9_-]{43}$/;

/**
 * The node-directives cursor, sealed. Inside it is a position in the global event log, which
 * a client must not read: watching it grow would tell an operator how much the whole fleet
 * changes, other clusters included.
 *
 * One AES-256 block holds 8 random bytes and the position, so every cursor is fresh random
 * bytes to its reader, even one handed back unchanged after an empty answer (equal cursors
 * would tell that nothing changed anywhere in the fleet). An HMAC-SHA256 tag over the cluster
 * id and the block, checked before anything is decrypted, makes a cursor open only for the
 * cluster it was issued for, and a made-up or altered one not at all.
 *
 * Both keys come from the API's JWT secret (HKDF), which every replica shares: any replica
 * opens any replica's cursor, and a restart keeps them valid. A new secret turns old cursors
 * into 400s; the operator then lists again without `since` (docs/OPERATOR.md).
 */
export class DirectiveCursors {
  private readonly encryptionKey: Buffer;
  private readonly macKey: Buffer;

  constructor(secret: string) {
    if (!secret) throw new Error('DirectiveCursors needs a non-empty secret');
    const keys = Buffer.from(
      hkdfSync(
        'sha256',
        Buffer.from(secret, 'utf8'),
        Buffer.alloc(0),
        'fleet node-directives cursor v1',
        64,
      ),
    );
    this.encryptionKey = keys.subarray(0, 32);
    this.macKey = keys.subarray(32);
  }

  seal(clusterId: string, position: LogPosition): string {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new Error(`a cursor position must be a non-negative integer, not ${position}`);
    }
    const block = Buffer.alloc(BLOCK_BYTES);
    randomBytes(NONCE_BYTES).copy(block);
    block.writeBigUInt64BE(BigInt(position), NONCE_BYTES);
    const cipher = createCipheriv('aes-256-ecb', this.encryptionKey, null).setAutoPadding(false);
    const sealed = Buffer.concat([cipher.update(block), cipher.final()]);
    return VERSION + Buffer.concat([sealed, this.tag(clusterId, sealed)]).toString('base64url');
  }

  /** The position sealed in `cursor` for `clusterId`; null for anything else. */
  open(clusterId: string, cursor: string): LogPosition | null {
    if (!SEALED_CURSOR.test(cursor)) return null;
    const text = cursor.slice(VERSION.length);
    const bytes = Buffer.from(text, 'base64url');
    // One spelling per cursor: base64url's unused low bits must not yield a second one.
    if (bytes.length !== BLOCK_BYTES + TAG_BYTES || bytes.toString('base64url') !== text) {
      return null;
    }
    const sealed = bytes.subarray(0, BLOCK_BYTES);
    if (!timingSafeEqual(bytes.subarray(BLOCK_BYTES), this.tag(clusterId, sealed))) return null;
    const decipher = createDecipheriv('aes-256-ecb', this.encryptionKey, null).setAutoPadding(
      false,
    );
    const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
    const position = block.readBigUInt64BE(NONCE_BYTES);
    return position <= BigInt(Number.MAX_SAFE_INTEGER) ? asLogPosition(Number(position)) : null;
  }

  private tag(clusterId: string, sealed: Buffer): Buffer {
    return createHmac('sha256', this.macKey)
      .update(clusterId)
      .update('\0')
      .update(sealed)
      .digest()
      .subarray(0, TAG_BYTES);
  }
}
