import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';

type DtoClass = new () => object;

/**
 * A property holding one DTO. `ValidateNested` alone also takes an array (it validates the
 * array's items, so `[]` or `[{...}]` passed and reached the command as an array), so the
 * value must be an object first. A value of the wrong type is told only that (validation.pipe).
 */
export const NestedDto = (dto: () => DtoClass): PropertyDecorator =>
  applyDecorators(IsObject(), ValidateNested(), Type(dto));

/** A property holding an array of DTOs (with `IsArray`): each item must be an object too. */
export const NestedDtos = (dto: () => DtoClass): PropertyDecorator =>
  applyDecorators(IsObject({ each: true }), ValidateNested({ each: true }), Type(dto));
