import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { SubscriptionRunner } from '@fleet/cqrs';
import { EventStore } from '@fleet/eventstore/port';
import { forbidden, notFound } from '@fleet/kernel';
import { Filter, InvalidCursorError, ReadModelStore } from '@fleet/readmodels/port';
import { Caller, readsEveryOwner } from '../platform/auth/caller';
import { CurrentCaller, Roles } from '../platform/auth/decorators';
import { validationFailed } from '../platform/errors/error-envelope';
import { EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { recordView } from './billing-line';
import { readSessionLog, recordsMatching, verifySessionLog } from './billing-verify';
import {
  ceilToMillisecond,
  compareInstants,
  floorToMillisecond,
} from '../platform/http/zoned-time';
import {
  BILLED_SESSION_ID,
  BILLED_SESSION_ID_RULE,
  BillingRecordPage,
  BillingVerificationView,
  ListBillingRecordsQuery,
} from './billing.dto';
import { BILLING_PROJECTION, BILLING_RECORDS, BillingRecordDoc } from './billing.projection';

// By name too: instanceof fails when the error class was loaded twice (jest module registries).
const isInvalidCursor = (error: unknown): boolean =>
  error instanceof InvalidCursorError || (error as Error | null)?.name === 'InvalidCursorError';

/** How long a verify waits for the billing projection to reach the session's last event. */
const SETTLE_MS = 5000;

@ApiTags('billing')
@ApiBearerAuth()
@Roles('user', 'admin', 'auditor')
@Controller('v1/billing')
export class BillingController {
  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
  ) {}

  /**
   * Records by `from`, then `_id`. `from`/`to` select the records in [from, to): those that
   * overlap it for some time (record.to > from), or start in it (a record of no length at
   * `from`), and start before `to`. One ending exactly at `from` belongs to the window
   * before: consecutive windows count each record once. Every match without `limit` or
   * `cursor`; pages of `limit` (default 100) with either. `total` sums every match.
   */
  @Get('records')
  @ApiOkResponse({ type: BillingRecordPage })
  async records(
    @Query() query: ListBillingRecordsQuery,
    @CurrentCaller() caller: Caller,
  ): Promise<BillingRecordPage> {
    const filter: Filter = {};
    if (readsEveryOwner(caller)) {
      if (query.owner !== undefined) filter.owner = query.owner;
    } else {
      if (query.owner !== undefined && query.owner !== caller.sub) {
        throw forbidden('a user may read only its own billing records');
      }
      filter.owner = caller.sub;
    }
    if (query.sessionId !== undefined) filter.sessionId = query.sessionId;
    // The window is checked on the instants as sent: rounded, `…34.9181Z` (to) and `…34.9185Z`
    // (from) were the same millisecond and the inverted window was taken.
    if (
      query.from !== undefined &&
      query.to !== undefined &&
      compareInstants(query.from, query.to) > 0
    ) {
      throw validationFailed([{ field: 'to', problems: ['to must not be before from'] }]);
    }
    // Stored times are all toISOString() form, so string order is time order; a bound finer
    // than a millisecond is rounded up to the next, which compares with them the same way.
    const from = query.from === undefined ? undefined : ceilToMillisecond(query.from);
    const to = query.to === undefined ? undefined : ceilToMillisecond(query.to);
    if (query.from !== undefined) {
      // Stored times are whole milliseconds: `to > from` holds exactly when it holds for
      // `from` rounded down, and `from ≥ from` when it holds for `from` rounded up.
      filter.$or = [{ to: { $gt: floorToMillisecond(query.from) } }, { from: { $gte: from } }];
    }
    if (to !== undefined) filter.from = { $lt: to };
    try {
      // `total` sums every match, so every match is read anyway.
      const all = await recordsMatching(this.readModels, filter);
      const total = all.reduce((sum, r) => sum + r.amount, 0);
      // API.md's listing is every matching record; paging is asked for with limit or cursor
      // (a default page of 100 left a client that does not page short of what `total` sums).
      if (query.limit === undefined && query.cursor === undefined) {
        return { items: all, total, nextCursor: null } as BillingRecordPage;
      }
      const page = await this.readModels.find<BillingRecordDoc>(BILLING_RECORDS, filter, {
        sort: { from: 1 },
        limit: query.limit ?? 100,
        cursor: query.cursor ?? null,
      });
      return {
        items: page.items.map(recordView),
        total,
        nextCursor: page.nextCursor,
      } as BillingRecordPage;
    } catch (error) {
      if (isInvalidCursor(error)) {
        throw validationFailed([{ field: 'cursor', problems: ['is not a cursor of this query'] }]);
      }
      throw error;
    }
  }

  /**
   * The stored records of a session against its bill recomputed from the session stream.
   * A user may verify only its own sessions: another's answers 404, as if it did not exist.
   */
  @Get('sessions/:sessionId/verify')
  @ApiOkResponse({ type: BillingVerificationView })
  async verify(
    @Param('sessionId') sessionId: string,
    @CurrentCaller() caller: Caller,
  ): Promise<BillingVerificationView> {
    if (!BILLED_SESSION_ID.test(sessionId)) {
      throw validationFailed([{ field: 'sessionId', problems: [BILLED_SESSION_ID_RULE] }]);
    }
    const log = await readSessionLog(this.events, sessionId);
    if (log.owner === null || (!readsEveryOwner(caller) && log.owner !== caller.sub)) {
      throw notFound('session', sessionId);
    }
    // Read-your-writes: records of events just appended may still be on their way.
    await this.runner.settle(log.lastPosition, [`projection:${BILLING_PROJECTION}`], SETTLE_MS);
    return verifySessionLog(this.readModels, sessionId, log);
  }
}
