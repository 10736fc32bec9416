import { ApiProperty } from '@nestjs/swagger';

export class ErrorBodyDto {
  @ApiProperty({
    description: 'snake_case; the contract names each (validation_failed, forbidden, node_busy...)',
    example: 'validation_failed',
    pattern: '^[a-z][a-z0-9_]*$',
  })
  code!: string;

  @ApiProperty({ description: 'For people; never parse it', example: 'invalid request: limit' })
  message!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Machine-readable specifics: `fields` for validation_failed, `correlationId` for internal_error',
    example: { fields: [{ field: 'limit', problems: ['limit must not be greater than 1000'] }] },
  })
  details!: Record<string, unknown>;
}

/** Every error response of the API has this shape (see API.md, conventions). */
export class ErrorEnvelopeDto {
  @ApiProperty({ type: ErrorBodyDto })
  error!: ErrorBodyDto;
}
