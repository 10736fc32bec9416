import { isISO8601 } from 'class-validator';
import { GPU_MODELS } from '../../catalog/catalog';
import { OBJECT_KEYS } from '../../platform/http/object-keys';
import { CLUSTER_ID } from '../../platform/http/ids';
import { NODE_ROLES } from '../node.events';
import type { InventoryReportDto } from './inventory.dto';

/** RFC 1123 hostname: dot-separated labels of [a-z0-9-], not starting or ending with '-'. */
export const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
export const GPU_UUID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
/**
 * An RFC 3339 date-time with its offset (Z or ±hh:mm), seconds 00-59, up to nanoseconds. ISO-8601
 * (IsISO8601) also allows week and ordinal dates, basic forms, decimal commas and local times,
 * which `Date` cannot read or reads in the server's zone; IsISO8601 still checks the calendar.
 */
export const OBSERVED_AT =
  /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/*
 * The inventory report's fast path (the DTO's static `fastPath`): a hand-written check of
 * `InventoryReportDto`, up to 1000 nested nodes of up to 64 cards, where class-transformer and
 * class-validator cost most of a large report's CPU (docs/PERFORMANCE.md). It says "valid" only
 * for a body the DTO accepts as it is; anything else, anything unusual that is perhaps valid
 * too, takes the full path, which names each bad field. Its spec holds it to that.
 */

const REPORT_KEYS: ReadonlySet<string> = new Set(['clusterId', 'nodes']);
const NODE_KEYS: ReadonlySet<string> = new Set([
  'hostname',
  'role',
  'labels',
  'capacity',
  'gpus',
  'kubeletReady',
  'unschedulable',
  'observedAt',
]);
const CAPACITY_KEYS: ReadonlySet<string> = new Set(['cpu', 'memoryGiB', 'diskGiB']);
const GPU_KEYS: ReadonlySet<string> = new Set(['uuid', 'model', 'memoryGiB']);
const ROLES: ReadonlySet<unknown> = new Set<unknown>(NODE_ROLES);
const MODELS: ReadonlySet<unknown> = new Set<unknown>(GPU_MODELS);

type Obj = Record<string, unknown>;

/**
 * A plain JSON object (what the body parser builds), not an array, null or anything exotic:
 * its prototype is an `Object.prototype` (of any realm, e.g. a test runner's vm context).
 */
const isPlain = (v: unknown): v is Obj => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto !== null && Object.getPrototypeOf(proto) === null;
};

/** Every own key is one of `allowed` (the whitelist with forbidNonWhitelisted). */
const onlyKeys = (o: Obj, allowed: ReadonlySet<string>): boolean => {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
};

const intIn = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** IsOptional: null and undefined skip every other rule. */
const absent = (v: unknown): boolean => v === undefined || v === null;

/** The DTO's IsISO8601 (strict) and Matches(OBSERVED_AT): RFC 3339 with its offset. */
const isObservedAt = (v: unknown): boolean =>
  typeof v === 'string' && OBSERVED_AT.test(v) && isISO8601(v, { strict: true });

const isCapacity = (v: unknown): boolean =>
  isPlain(v) &&
  onlyKeys(v, CAPACITY_KEYS) &&
  intIn(v.cpu, 0, 4096) &&
  intIn(v.memoryGiB, 0, 65536) &&
  intIn(v.diskGiB, 0, 1048576);

const isGpu = (v: unknown): boolean =>
  isPlain(v) &&
  onlyKeys(v, GPU_KEYS) &&
  typeof v.uuid === 'string' &&
  GPU_UUID.test(v.uuid) &&
  MODELS.has(v.model) &&
  intIn(v.memoryGiB, 1, 1024);

/**
 * Labels are free-form for the DTO (IsObject); string values only here, the rest is checked
 * later. A key named like an Object.prototype member (`constructor`, `toString`) is a label
 * the DTO drops (class-transformer skips it, the ValidationPipe deletes some): handed over.
 */
const isLabels = (v: unknown): boolean => {
  if (!isPlain(v)) return false;
  for (const k in v) if (OBJECT_KEYS.has(k) || typeof v[k] !== 'string') return false;
  return true;
};

const isNode = (v: unknown): boolean => {
  if (!isPlain(v) || !onlyKeys(v, NODE_KEYS)) return false;
  if (typeof v.hostname !== 'string' || !HOSTNAME.test(v.hostname)) return false;
  if (!ROLES.has(v.role)) return false;
  if (!absent(v.labels) && !isLabels(v.labels)) return false;
  if (!isCapacity(v.capacity)) return false;
  const gpus = v.gpus;
  if (!absent(gpus)) {
    if (!Array.isArray(gpus) || gpus.length > 64) return false;
    for (let i = 0; i < gpus.length; i++) if (!isGpu(gpus[i])) return false;
  }
  if (typeof v.kubeletReady !== 'boolean') return false;
  if (!absent(v.unschedulable) && typeof v.unschedulable !== 'boolean') return false;
  if (!absent(v.observedAt) && !isObservedAt(v.observedAt)) return false;
  return true;
};

/** True only for a body the InventoryReportDto accepts as it is. */
export const isPlainValidInventoryReport = (body: unknown): body is InventoryReportDto => {
  if (!isPlain(body) || !onlyKeys(body, REPORT_KEYS)) return false;
  // CLUSTER_ID allows at most 63 ASCII characters: MaxLength(63) holds whenever it matches.
  if (typeof body.clusterId !== 'string' || !CLUSTER_ID.test(body.clusterId)) return false;
  const nodes = body.nodes;
  if (!Array.isArray(nodes) || nodes.length < 1 || nodes.length > 1000) return false;
  for (let i = 0; i < nodes.length; i++) if (!isNode(nodes[i])) return false;
  return true;
};

type Labels = Record<string, unknown>;

/**
 * Each node's labels as sent, copied into prototype-less objects: `constructor`, `prototype`
 * or `toString` are valid Kubernetes label keys, but the ValidationPipe deletes some of them
 * from every object and class-transformer skips the others. (Outside labels such a key is
 * refused before either runs: object-keys.ts.)
 */
const labelsAsSent = (body: unknown): Array<Labels | undefined> => {
  const nodes = isPlain(body) ? body.nodes : undefined;
  if (!Array.isArray(nodes)) return [];
  return nodes.map((n: unknown) => {
    const labels = isPlain(n) ? n.labels : undefined;
    if (!isPlain(labels)) return undefined;
    const copy: Labels = Object.create(null) as Labels;
    for (const k of Object.keys(labels)) copy[k] = labels[k];
    return copy;
  });
};

/**
 * The labels as sent, put back on a DTO the full path made (the controller checks every label
 * key and value later).
 */
export const keepLabelsAsSent = (sent: unknown): ((dto: InventoryReportDto) => void) => {
  // Copied now: the full path deletes some of them from the body it is given.
  const labels = labelsAsSent(sent);
  return (dto) =>
    dto.nodes.forEach((node, i) => {
      const kept = labels[i];
      if (kept !== undefined && node.labels) node.labels = kept as Record<string, string>;
    });
};
