import { createHash } from 'node:crypto';

/**
 * A tenant's prefix in the bucket, from the cluster's owner: `t-` and the SHA-256 of the owner
 * in hex. Owners are free text (e-mail addresses, names with spaces): the hash gives every owner
 * a prefix of the same safe shape, and two owners share one only by a SHA-256 collision.
 */
export const tenantPrefix = (owner: string): string =>
  `t-${createHash('sha256').update(owner, 'utf8').digest('hex')}`;

/** `BACKUP_BUCKET/<tenant prefix>/<clusterId>/<backupId>` (the bucket's own `/` kept once). */
export const backupLocation = (
  bucket: string,
  owner: string,
  clusterId: string,
  backupId: string,
): string => `${bucket.replace(/\/+$/, '')}/${tenantPrefix(owner)}/${clusterId}/${backupId}`;
