import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** The paging every list endpoint takes: `limit` (1-1000, default 100) and an opaque `cursor`. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: "The previous page's nextCursor" })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  cursor?: string;
}
