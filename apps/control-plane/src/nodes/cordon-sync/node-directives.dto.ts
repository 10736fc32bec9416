import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { QUERY_INT, QueryInt, QueryParams } from '../../platform/http/page-query.dto';

export const MAX_WAIT_SEC = 60;
export const DEFAULT_WAIT_SEC = 25;

@QueryParams()
export class NodeDirectivesQuery {
  @ApiPropertyOptional({
    description:
      'The `cursor` of the previous answer (opaque). Without it, every node of the cluster is returned at once.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  since?: string;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_WAIT_SEC,
    default: DEFAULT_WAIT_SEC,
    description: 'Seconds to hold the request while nothing changed after `since`',
  })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(0)
  @Max(MAX_WAIT_SEC)
  wait?: number;
}

export class DesiredNodeState {
  @ApiProperty({ description: "What the Kubernetes node's spec.unschedulable should be" })
  unschedulable!: boolean;
}

export class NodeDirectiveView {
  @ApiProperty() nodeId!: string;
  @ApiProperty() hostname!: string;
  @ApiProperty({ type: DesiredNodeState }) desired!: DesiredNodeState;
}

export class NodeDirectivesPage {
  @ApiProperty({ type: [NodeDirectiveView] }) items!: NodeDirectiveView[];
  @ApiProperty({ description: 'Pass as `since` on the next request' }) cursor!: string;
}
