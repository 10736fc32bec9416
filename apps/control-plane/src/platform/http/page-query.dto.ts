import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, TransformFnParams } from 'class-transformer';
import {
  getMetadataStorage,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { validationFailed } from '../errors/error-envelope';

/**
 * An integer in a query: plain decimal digits only. `Number()` would also read `0x10`, `1e3`,
 * ` 1` and `` (as 0); those stay strings here and fail `IsInt`, with the field named.
 */
export const QueryInt = (): PropertyDecorator =>
  Transform(({ value }: TransformFnParams) =>
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
  );

/** The message of `IsInt` on a query integer: says which forms are taken. */
export const QUERY_INT = { message: '$property must be an integer in plain decimal digits' };

/**
 * Every parameter of the query DTO it decorates may be given once: `?limit=1&limit=2` is 400
 * saying so, rather than listing every rule an array breaks. Thrown while the query is
 * transformed, before validation, for the first parameter given more than once.
 */
export const QueryParams = (): ClassDecorator => (target) => {
  const properties = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(target, '', false, false, undefined)
      .map((m) => m.propertyName),
  );
  for (const field of properties) {
    Transform(({ value }: TransformFnParams) => {
      if (Array.isArray(value)) {
        throw validationFailed([{ field, problems: [`${field} was given more than once`] }]);
      }
      return value;
    })(target.prototype as object, field);
  }
};

/** The paging every list endpoint takes: `limit` (1-1000, default 100) and an opaque `cursor`. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(1)
  @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: "The previous page's nextCursor" })
  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'cursor must not be empty' })
  @MaxLength(2048)
  cursor?: string;
}
