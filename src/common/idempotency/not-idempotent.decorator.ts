import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

const NOT_IDEMPOTENT = 'tms:not-idempotent';
/** OpenAPI extension marking an operation without `Idempotency-Key` support. */
export const NO_IDEMPOTENCY_EXTENSION = 'x-idempotency-key-ignored';

/**
 * A POST whose answer must never be stored (it carries a secret shown once, such as a new API key):
 * its `Idempotency-Key` header is ignored and the request always runs. The OpenAPI document then
 * does not offer the header on it.
 */
export const NotIdempotent = (): MethodDecorator =>
  applyDecorators(SetMetadata(NOT_IDEMPOTENT, true), ApiExtension(NO_IDEMPOTENCY_EXTENSION, true));

/** True when the handler was declared {@link NotIdempotent}. */
export function isNotIdempotent(handler: object): boolean {
  return Reflect.getMetadata(NOT_IDEMPOTENT, handler) === true;
}
