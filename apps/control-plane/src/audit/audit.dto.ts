import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { QUERY_INT, QueryInt, QueryParams } from '../platform/http/page-query.dto';

@QueryParams()
export class ReadLogQuery {
  @ApiPropertyOptional({
    description:
      "Exclusive: events after this global position (0: from the start); the previous page's nextPosition",
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
  })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(0)
  // Larger integers lose digits as numbers (9007199254740993 read back as ...992).
  @Max(Number.MAX_SAFE_INTEGER)
  fromPosition?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(1)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({
    description:
      'Comma-separated event types, bare (`NodeCordoned`) or versioned (`NodeCordoned.v1`)',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z][A-Za-z0-9]*(\.v\d+)?(,[A-Za-z][A-Za-z0-9]*(\.v\d+)?){0,49}$/, {
    message: 'type must be a comma-separated list of event type names',
  })
  type?: string;
}

@QueryParams()
export class ReadStreamQuery {
  @ApiPropertyOptional({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'First revision to return (inclusive)',
  })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  fromRevision?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(1)
  @Max(1000)
  limit?: number;
}
