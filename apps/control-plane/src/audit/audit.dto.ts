import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

export class ReadLogQuery {
  @ApiPropertyOptional({
    description: "First global position to return (inclusive); the previous page's nextPosition",
    minimum: 0,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  fromPosition?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
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

export class ReadStreamQuery {
  @ApiPropertyOptional({ minimum: 0, description: 'First revision to return (inclusive)' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  fromRevision?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}
