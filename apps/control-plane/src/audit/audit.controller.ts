import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { notFound } from '@fleet/kernel';
import {
  EventStore,
  InvalidPositionError,
  LogPosition,
  StoredEvent,
  asLogPosition,
} from '@fleet/eventstore/port';
import { Roles } from '../platform/auth/decorators';
import { validationFailed } from '../platform/errors/error-envelope';
import { EventTypes } from '../platform/runtime/event-types';
import { EVENT_STORE } from '../platform/runtime/tokens';
import { ReadLogQuery, ReadStreamQuery } from './audit.dto';

const STREAM_ID = /^[a-z][a-z0-9]*-[A-Za-z0-9._:@-]{1,200}$/;

export type EventView = {
  eventId: string;
  streamId: string;
  revision: number;
  position: LogPosition;
  type: string;
  data: unknown;
  metadata: StoredEvent['metadata'];
};

const view = (e: StoredEvent): EventView => ({
  eventId: e.eventId,
  streamId: e.streamId,
  revision: e.revision,
  position: e.position,
  type: e.type,
  data: e.data,
  metadata: e.metadata,
});

/** The event-stream API for auditors: the global log and single streams, read as stored. */
@ApiTags('audit')
@ApiBearerAuth()
@Roles('auditor', 'admin')
@Controller('v1')
export class AuditController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(EventTypes) private readonly types: EventTypes,
  ) {}

  /**
   * `fromPosition` is exclusive (events after it; 0 or none: from the start) and `nextPosition` is
   * the last event's position, so a page's `nextPosition` sent back as `fromPosition` reads on with
   * no gap and no repeat; with no new events it stays put, for polling. Positions are opaque.
   */
  @Get('events')
  async readLog(
    @Query() query: ReadLogQuery,
  ): Promise<{ events: EventView[]; nextPosition: LogPosition }> {
    const from = asLogPosition(query.fromPosition ?? 0);
    const types = query.type ? this.types.expand(query.type.split(',')) : undefined;
    let events: StoredEvent[];
    try {
      events = await this.store.readAll({ after: from, limit: query.limit ?? 100, types });
    } catch (error) {
      if (!(error instanceof InvalidPositionError)) throw error;
      throw validationFailed([
        { field: 'fromPosition', problems: ['must be 0 or a position this log handed out'] },
      ]);
    }
    const nextPosition = events.length ? events[events.length - 1].position : from;
    return { events: events.map(view), nextPosition };
  }

  @Get('streams/:streamId')
  async readStream(
    @Param('streamId') streamId: string,
    @Query() query: ReadStreamQuery,
  ): Promise<{ events: EventView[] }> {
    if (!STREAM_ID.test(streamId)) {
      throw validationFailed([{ field: 'streamId', problems: ['must look like <category>-<id>'] }]);
    }
    if ((await this.store.streamRevision(streamId)) === null) throw notFound('stream', streamId);
    const events = await this.store.readStream(streamId, {
      fromRevision: query.fromRevision ?? 0,
      limit: query.limit ?? 100,
    });
    return { events: events.map(view) };
  }
}
