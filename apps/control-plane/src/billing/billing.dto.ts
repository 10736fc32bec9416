import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { OWNER_FORMAT, OWNER_RULE } from '../platform/auth/caller';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';
import { IsZonedTime } from '../platform/http/zoned-time';

/**
 * A session id as billing takes it, in a path or a filter: looser than the sessions API's UUIDs,
 * since billing also reads the logs of sessions recorded by other writers (and older versions).
 */
export const BILLED_SESSION_ID = /^[A-Za-z0-9._:@-]{1,200}$/;
export const BILLED_SESSION_ID_RULE = 'must be a session id (1-200 letters, digits or ._:@-)';

@QueryParams()
export class ListBillingRecordsQuery extends PageQuery {
  @ApiPropertyOptional({ description: "Only this owner's records (a user may only name itself)" })
  @IsOptional()
  @IsString()
  @Matches(OWNER_FORMAT, { message: `owner ${OWNER_RULE}` })
  owner?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(BILLED_SESSION_ID, { message: `sessionId ${BILLED_SESSION_ID_RULE}` })
  sessionId?: string;

  @ApiPropertyOptional({
    description:
      'Records in [from, to): those running after from or starting at or after it (ISO-8601 with a UTC offset)',
    example: '2026-12-01T00:00:00Z',
  })
  @IsOptional()
  @IsZonedTime('from')
  from?: string;

  @ApiPropertyOptional({
    description: 'Records in [from, to): those starting before to (ISO-8601 with a UTC offset)',
    example: '2027-01-01T00:00:00Z',
  })
  @IsOptional()
  @IsZonedTime('to')
  to?: string;
}

export class BillingRecordView {
  @ApiProperty({ description: 'The id of the event that closed the segment' }) recordId!: string;
  @ApiProperty() sessionId!: string;
  @ApiProperty() owner!: string;
  @ApiProperty() nodeId!: string;
  @ApiProperty() hostname!: string;
  @ApiProperty({ type: [String] }) gpuUuids!: string[];
  @ApiProperty({ type: String, nullable: true, description: 'Null for a CPU session' })
  gpuModel!: string | null;
  @ApiProperty({ format: 'date-time' }) from!: string;
  @ApiProperty({ format: 'date-time' }) to!: string;
  @ApiProperty() seconds!: number;
  @ApiProperty({ description: 'Minor units per card-hour (GPU) or vCPU-hour (CPU)' })
  unitPricePerHour!: number;
  @ApiProperty({ description: 'round_half_up(ms × units × unitPricePerHour / 3,600,000)' })
  amount!: number;
  @ApiProperty() currency!: string;
  @ApiProperty({ description: 'Cards (GPU) or vCPUs (CPU) billed' }) units!: number;
}

export class BillingRecordPage {
  @ApiProperty({ type: [BillingRecordView] }) items!: BillingRecordView[];
  @ApiProperty({ description: 'Sum of `amount` over every record the filter matches, all pages' })
  total!: number;
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}

class LineKeyView {
  @ApiProperty({ format: 'date-time' }) from!: string;
  @ApiProperty({ format: 'date-time' }) to!: string;
  @ApiProperty() amount!: number;
}

export class BillingMismatchView {
  @ApiProperty() index!: number;
  @ApiProperty({ enum: ['missing_record', 'unexpected_record', 'different'] }) problem!: string;
  @ApiProperty({ type: String, nullable: true }) recordId!: string | null;
  @ApiProperty({ type: LineKeyView, nullable: true }) recorded!: LineKeyView | null;
  @ApiProperty({ type: LineKeyView, nullable: true }) recomputed!: LineKeyView | null;
}

export class BillingVerificationView {
  @ApiProperty() sessionId!: string;
  @ApiProperty({ description: 'Sum of the stored records' }) recorded!: number;
  @ApiProperty({ description: "Sum recomputed from the session's events" }) recomputed!: number;
  @ApiProperty() ok!: boolean;
  @ApiProperty({ type: [BillingMismatchView], description: 'Lines that disagree (an addition)' })
  details!: BillingMismatchView[];
}
