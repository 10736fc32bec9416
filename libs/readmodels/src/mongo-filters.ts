import { Filter, IndexKeys } from './port';

/**
 * Bookkeeping fields of stored documents, never handed out: the checkpoint of the commit that
 * last wrote the document, and the mark of a tombstone (what a delete leaves, so that an older
 * upsert from a writer behind cannot bring the document back).
 */
export const WRITTEN_AT = '_checkpoint';
export const DELETED = '_deleted';
export const HIDDEN = { [WRITTEN_AT]: 0, [DELETED]: 0 } as const;
export const LIVE = { [DELETED]: { $exists: false } } as const;

/** The keys MongoDB indexes for a declaration: an equality field is paged in `_id` order. */
export function indexKeys(index: string | IndexKeys): IndexKeys {
  return typeof index === 'string' ? { [index]: 1, _id: 1 } : index;
}

/**
 * `effective` (the caller's `filter`, narrowed to a page) with tombstones left out, unless
 * the caller's filter can never match one: a tombstone has no field but `_id` and the
 * bookkeeping, so a condition that a missing field fails (an equality with a value, a range)
 * excludes it already. Those filters stay as they were, and with them the plans that answer
 * from an index alone (the count of online nodes).
 */
export function withoutTombstones(filter: Filter, effective: Filter): Filter {
  return excludesMissing(filter) ? effective : { $and: [effective, LIVE] };
}

/** Whether no document lacking every field but `_id` can match `filter`. */
function excludesMissing(filter: Filter): boolean {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      if (condition.some((f) => isFilter(f) && excludesMissing(f))) return true;
    } else if (key === '$or' && Array.isArray(condition)) {
      if (condition.length > 0 && condition.every((f) => isFilter(f) && excludesMissing(f))) {
        return true;
      }
    } else if (!key.startsWith('$') && key !== '_id' && failsOnMissing(condition)) {
      return true;
    }
  }
  return false;
}

/** Whether a field's condition fails when the field is missing (conservative: false when unsure). */
function failsOnMissing(condition: unknown): boolean {
  if (condition === null || condition === undefined) return false;
  if (typeof condition !== 'object' || Array.isArray(condition) || condition instanceof Date) {
    return true;
  }
  const entries = Object.entries(condition as Record<string, unknown>);
  // An embedded document to equal (no operator): a missing field is not it.
  if (entries.length > 0 && entries.every(([op]) => !op.startsWith('$'))) return true;
  return entries.some(([op, operand]) => {
    switch (op) {
      case '$eq':
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        return operand !== null && operand !== undefined;
      case '$in':
        return Array.isArray(operand) && operand.every((v) => v !== null && v !== undefined);
      case '$exists':
        return operand === true;
      default:
        return false;
    }
  });
}

function isFilter(value: unknown): value is Filter {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
