import { Injectable } from '@nestjs/common';
import type { ResourceRef } from '../access/project-access';
import { AppException } from '../errors/app-exception';
import { currentStore } from '../persistence/request-context';
import { ifMatchPasses, jsonEtag, parseEntityTags, partsEtag } from './conditional';
import { PreconditionsRepository } from './preconditions.repository';

/** What `If-Match` locks before comparing: a resource's own row, or the run of an item or row. */
export type LockTarget =
  | { resource: ResourceRef; id: string }
  | { runOfItem: string }
  | { runOfRow: string };

/**
 * `If-Match` for writes (PATCH, PUT, DELETE). A handler calls {@link ifMatch} (or
 * {@link ifMatchParts} for a resource its GET writes in parts) first, inside its transaction: with
 * no `If-Match` header nothing happens (no query, today's behaviour); with one, the resource is
 * locked (`SELECT … FOR UPDATE`), its current representation is built by the same service call
 * its GET makes, hashed as the GET's ETag is, and compared strongly with the header; a stale tag is
 * 412 `precondition_failed` carrying the current `ETag`, thrown before anything is written (the
 * transaction rolls back). The lock is held to the end of the transaction: a second writer with
 * the same tag waits, then sees the first one's change, and gets 412.
 */
@Injectable()
export class Preconditions {
  constructor(private readonly repo: PreconditionsRepository) {}

  /** `If-Match` against a resource whose GET answers `current()` as JSON (`res.json`). */
  ifMatch(target: LockTarget, current: () => Promise<unknown>): Promise<void> {
    return this.check(target, async () => jsonEtag(await current()));
  }

  /** `If-Match` against a resource whose GET answers `current()` with `sendJsonParts`. */
  ifMatchParts(
    target: LockTarget,
    current: () => Promise<readonly (string | Buffer)[]>,
  ): Promise<void> {
    return this.check(target, async () => partsEtag(await current()));
  }

  private async check(target: LockTarget, etagOf: () => Promise<string>): Promise<void> {
    const store = currentStore();
    const header = store?.req.headers['if-match'];
    const tags = parseEntityTags(header);
    if (tags === null) return;
    if (store?.manager === undefined) {
      throw new Error('If-Match is checked inside the request transaction (@Transactional())');
    }
    const exists = await this.lock(target);
    const etag = exists && tags !== '*' ? await etagOf() : exists ? '*' : null;
    if (ifMatchPasses(header, etag)) return;
    throw new AppException(
      'precondition_failed',
      etag === null
        ? 'If-Match names a resource that does not exist'
        : `The resource changed since it was read: its current ETag is ${etag}, If-Match was ${String(header)}`,
      undefined,
      etag === null ? undefined : { ETag: etag },
    );
  }

  private lock(target: LockTarget): Promise<boolean> {
    if ('resource' in target) return this.repo.lockRow(target.resource.table, target.id);
    if ('runOfItem' in target) return this.repo.lockRunOfItem(target.runOfItem);
    return this.repo.lockRunOfRow(target.runOfRow);
  }
}
