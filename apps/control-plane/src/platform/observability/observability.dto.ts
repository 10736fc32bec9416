import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Check, Readiness } from './health';

export class LivenessDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

export class CheckDto implements Check {
  @ApiProperty()
  ok!: boolean;

  @ApiPropertyOptional({ description: 'Why the check failed' })
  error?: string;
}

export class SubscriptionsCheckDto extends CheckDto {
  @ApiPropertyOptional({
    type: [String],
    description: 'Projections or reactors retrying a failed page',
  })
  failing?: string[];

  @ApiPropertyOptional({
    type: [String],
    description: 'Projections or reactors too far behind the log',
  })
  lagging?: string[];
}

export class ReadinessChecksDto {
  @ApiProperty({ type: CheckDto, description: 'Read models caught up with the log at start' })
  runtime!: CheckDto;

  @ApiProperty({ type: CheckDto })
  eventStore!: CheckDto;

  @ApiProperty({ type: CheckDto })
  readModels!: CheckDto;

  @ApiProperty({ type: CheckDto })
  delayedJobs!: CheckDto;

  @ApiProperty({ type: SubscriptionsCheckDto })
  subscriptions!: SubscriptionsCheckDto;
}

export class ReadinessDto implements Readiness {
  @ApiProperty({ enum: ['ready', 'not_ready'] })
  status!: 'ready' | 'not_ready';

  @ApiProperty({ type: ReadinessChecksDto })
  checks!: ReadinessChecksDto;

  @ApiProperty({
    description:
      'Whether this replica holds the leader lease and runs the periodic work (not a check: a replica that does not lead is ready)',
  })
  leader!: boolean;
}
