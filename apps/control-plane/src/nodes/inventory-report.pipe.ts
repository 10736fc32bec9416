import { ArgumentMetadata, Injectable, PipeTransform, ValidationPipe } from '@nestjs/common';
import { isISO8601 } from 'class-validator';
import { GPU_MODELS } from '../catalog/catalog';
import { OBJECT_KEYS } from '../platform/http/object-keys';
import { createValidationPipe } from '../platform/http/validation.pipe';
import { CLUSTER_ID, GPU_UUID, HOSTNAME, InventoryReportDto, OBSERVED_AT } from './inventory.dto';
import { NODE_ROLES } from './node.events';

/**
 * A hand-written check of `InventoryReportDto` (the operator's report, up to 1000 nested
 * nodes of up to 64 cards, where class-transformer + class-validator cost most of a large
 * report's CPU; docs/PERFORMANCE.md).
 *
 * It only ever says "valid" for a body the class-validator DTO (through the global
 * ValidationPipe) accepts unchanged; anything else, including anything unusual that is
 * perhaps valid, is handed to that same ValidationPipe, which names each bad field exactly as
 * before. So refusals are the DTO's own, and the check only has to be conservative. The
 * differential spec (`inventory-report.pipe.unit.spec.ts`) holds it to that.
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

const METADATA: ArgumentMetadata = { type: 'body', metatype: InventoryReportDto, data: undefined };

type Labels = Record<string, unknown>;

/**
 * Each node's labels as sent, copied into prototype-less objects: `constructor`, `prototype`
 * or `toString` are valid Kubernetes label keys, but the ValidationPipe deletes some of them
 * from every object and class-transformer skips the others. (Outside labels such a key is
 * refused before either runs: object-keys.ts.) The controller checks every key and value later.
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
 * The inventory report body: the fast check above, else the app's ValidationPipe on
 * InventoryReportDto (same refusals, same `details.fields`). The handler's parameter must not
 * be typed with a class, or the global ValidationPipe would validate it first.
 */
@Injectable()
export class InventoryReportPipe implements PipeTransform<unknown, Promise<InventoryReportDto>> {
  private readonly fallback: ValidationPipe = createValidationPipe();

  async transform(value: unknown): Promise<InventoryReportDto> {
    if (isPlainValidInventoryReport(value)) return value;
    const labels = labelsAsSent(value);
    const dto = (await this.fallback.transform(value, METADATA)) as InventoryReportDto;
    // The DTO accepted the body: where it saw an object of labels, the labels as sent.
    dto.nodes.forEach((node, i) => {
      const sent = labels[i];
      if (sent !== undefined && node.labels) node.labels = sent as Record<string, string>;
    });
    return dto;
  }
}
