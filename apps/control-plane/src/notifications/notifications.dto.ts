import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { NOTIFICATION_TYPES, NotificationType } from './notification';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';
import { IsZonedTime } from '../platform/http/zoned-time';

@QueryParams()
export class ListNotificationsQuery extends PageQuery {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: 1000,
    description: 'Page size; without it, every notification (from `cursor` when given)',
  })
  declare limit?: number;

  @ApiPropertyOptional({
    description: 'Only notifications strictly after this time (ISO-8601 with a UTC offset)',
    example: '2026-12-02T10:00:00Z',
  })
  @IsOptional()
  @IsZonedTime('since')
  since?: string;
}

export class NotificationView {
  @ApiProperty({ description: 'The id of the event that raised it' }) id!: string;
  @ApiProperty({ enum: NOTIFICATION_TYPES }) type!: NotificationType;
  @ApiProperty() clusterId!: string;
  @ApiProperty({ type: String, nullable: true }) nodeId!: string | null;
  @ApiProperty({ type: String, nullable: true }) hostname!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Status left (node_status_changed)' })
  from!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Status reached (node_status_changed)',
  })
  to!: string | null;
  @ApiProperty({ type: String, nullable: true }) reason!: string | null;
  @ApiProperty({ format: 'date-time' }) at!: string;
}

export class NotificationPage {
  @ApiProperty({ type: [NotificationView] }) items!: NotificationView[];
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}
