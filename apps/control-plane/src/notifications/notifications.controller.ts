import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Filter, InvalidCursorError, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Roles } from '../platform/auth/decorators';
import { validationFailed } from '../platform/errors/error-envelope';
import { READ_MODELS } from '../platform/runtime/tokens';
import { NOTIFICATION_FIELDS, Notification } from './notification';
import { ListNotificationsQuery, NotificationPage } from './notifications.dto';
import { NOTIFICATIONS, NotificationDoc } from './notifications.projection';

const view = (doc: NotificationDoc): Notification =>
  Object.fromEntries(NOTIFICATION_FIELDS.map((f) => [f, doc[f]])) as Notification;

// By name too: instanceof fails when the error class was loaded twice (jest module registries).
const isInvalidCursor = (error: unknown): boolean =>
  error instanceof InvalidCursorError || (error as Error | null)?.name === 'InvalidCursorError';

/**
 * Admin notifications, oldest first; every admin sees every notification, and an auditor reads
 * them (API.md's role table: every query, notifications included).
 */
@ApiTags('notifications')
@ApiBearerAuth()
@Roles('admin', 'auditor')
@Controller('v1/notifications')
export class NotificationsController {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModelStore) {}

  @Get()
  @ApiOkResponse({ type: NotificationPage })
  async list(@Query() query: ListNotificationsQuery): Promise<NotificationPage> {
    const filter: Filter = {};
    if (query.since !== undefined) {
      // Stored times are all toISOString() form, so string order is time order (the query's
      // DTO let through only times Date can read).
      filter.at = { $gt: new Date(query.since).toISOString() };
    }
    // In the order they were recorded (the log's), not by `at`: a notification recorded later
    // may carry an earlier or equal `at` (two commands deciding in the same instant), and paging
    // by `at` would put it behind a cursor already handed out.
    const sort = { position: 1 } as const;
    try {
      if (query.limit !== undefined) {
        const page = await this.readModels.find<NotificationDoc>(NOTIFICATIONS, filter, {
          sort,
          limit: query.limit,
          cursor: query.cursor ?? null,
        });
        return { items: page.items.map(view), nextCursor: page.nextCursor };
      }
      // No limit: every one (API.md's list has no paging; a client that does not know
      // `nextCursor` must not miss notifications past a default page).
      const all = await findAll<NotificationDoc>(
        this.readModels,
        NOTIFICATIONS,
        filter,
        sort,
        query.cursor ?? null,
      );
      return { items: all.map(view), nextCursor: null };
    } catch (error) {
      if (isInvalidCursor(error)) {
        throw validationFailed([{ field: 'cursor', problems: ['is not a cursor of this query'] }]);
      }
      throw error;
    }
  }
}
