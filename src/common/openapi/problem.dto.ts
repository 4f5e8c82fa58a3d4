import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** RFC 9457 problem body (CONTRACT §3). Sent as `application/problem+json`. */
export class ProblemDto {
  @ApiProperty({ example: 'https://tms.local/errors/validation_error' }) type: string;
  @ApiProperty({ example: 'Validation failed' }) title: string;
  @ApiProperty({ example: 422, type: 'integer' }) status: number;
  @ApiProperty({ example: 'Request contains invalid fields' }) detail: string;
  @ApiProperty({ example: '/api/v1/test-runs' }) instance: string;
  @ApiProperty({ example: 'validation_error' }) code: string;
  @ApiProperty({ example: '0190f3b2-7c1d-7abc-8def-0123456789ab' }) request_id: string;
  @ApiPropertyOptional({
    description: 'Only on validation errors: dot-joined field path → messages',
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: { name: ['name should not be empty'] },
  })
  errors?: Record<string, string[]>;
}
