import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { canonicalId } from '../persistence/ids';

/**
 * Global pipe: a path parameter that is a uuid reaches its handler in lower case, the form the
 * database answers ids in. PostgreSQL compares uuids whatever their letter case, so the guard and
 * every statement already accepted `/run-cases/0190…AB`; a handler that then looked the id up among
 * the ids the database answered (a map keyed by them) missed it, and `PATCH /run-cases/{UPPER}`
 * wrote the change and answered an empty body. Any other parameter is left as it came.
 */
@Injectable()
export class CanonicalIdPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' && typeof value === 'string' ? canonicalId(value) : value;
  }
}
