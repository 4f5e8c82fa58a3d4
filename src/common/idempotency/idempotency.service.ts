import { HttpException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request, Response } from 'express';
import { finished } from 'node:stream/promises';
import { DataSource, QueryFailedError } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { AccessRefusal, AppException, FormRefusal } from '../errors/app-exception';
import { ProblemFilter } from '../errors/problem.filter';
import { maxBodyBytes } from '../http/body-limits';
import { createBodyDecoder, requestContentCoding } from '../http/content-encoding';
import { requestPath } from '../http/route-table';
import { JSON_CONTENT_TYPE, JsonBody } from '../http/json-body';
import { canonicalId } from '../persistence/ids';
import type { RequestStore } from '../persistence/request-context';
import {
  IDEMPOTENCY_KEY_FIELD,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyProblem,
  jsonFingerprint,
  queryOf,
  RawBodyFingerprint,
} from './idempotency-key';
import {
  IDEMPOTENCY_PURGE_BATCH,
  IdempotencyRepository,
  IdempotencyScope,
  StoredResponse,
} from './idempotency.repository';
import { isNotIdempotent } from './not-idempotent.decorator';
import { PreparedResponse } from './prepared-response';

/** Seconds a client is asked to wait (Retry-After) before retrying a key still in progress. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/**
 * The path a key is scoped to: the matched route with its parameters as the handler reads them
 * (uuids lower-cased, percent-escapes decoded and escaped again), so every spelling of one
 * resource's URL — an upper-case id, a trailing slash, an escaped letter — is one scope, as it is
 * one resource. Outside a route, the raw path without a trailing slash.
 */
export function idempotencyPath(
  req: Pick<Request, 'route' | 'baseUrl' | 'params' | 'originalUrl' | 'url'>,
): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof route !== 'string' || route.includes('*')) {
    return requestPath(req).replace(/(.)\/+$/, '$1');
  }
  const params = (req.params ?? {}) as Record<string, unknown>;
  return `${req.baseUrl ?? ''}${route}`.replace(/:(\w+)/g, (whole, name: string) => {
    const value = params[name];
    return typeof value === 'string' ? encodeURIComponent(canonicalId(value)) : whole;
  });
}

/**
 * The most the fingerprint of an unread multipart body reads by itself: the largest body an import
 * accepts (`maxBodyBytes`: the files and their framing); a larger one is refused with 413 and not
 * read to its end. JSON bodies are parsed before routing, never read here.
 */
export function fingerprintReadLimit(
  config: Pick<AppConfig, 'maxUploadBytes' | 'maxUploadFiles'>,
): number {
  return maxBodyBytes({ maxBytes: config.maxUploadBytes, maxFiles: config.maxUploadFiles });
}
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/**
 * SQLSTATEs of refusals that a retry of the same request would meet again (unique, check and
 * not-null violations, data exceptions): their 4xx is stored. Transient ones (a row removed
 * concurrently, serialization failures, deadlocks: 409 "retry it") are not.
 */
export function isDeterministicRefusal(sqlstate: string): boolean {
  return (
    sqlstate === '23505' ||
    sqlstate === '23514' ||
    sqlstate === '23502' ||
    sqlstate.startsWith('22')
  );
}

/** A JSON-serialisable result (not a stream, file or other value Nest sends otherwise). */
function isPlainResult(result: object): boolean {
  return (
    typeof (result as { pipe?: unknown }).pipe !== 'function' &&
    typeof (result as { getStream?: unknown }).getStream !== 'function' &&
    typeof (result as { then?: unknown }).then !== 'function' &&
    typeof (result as { subscribe?: unknown }).subscribe !== 'function'
  );
}

/**
 * The fingerprint of one request's body as it is read. A JSON body (or none) was parsed before
 * routing: its fingerprint is known at once. A multipart body is read by the handler: its bytes are
 * hashed as they go by (a `data` listener sees every chunk whoever reads them) and the fingerprint is
 * known once the body ended; `complete()` reads what the handler left unread.
 */
class BodyFingerprint {
  private readonly raw: RawBodyFingerprint | null;
  private readonly known: string | null;
  /** For a compressed body: whether its decoded bytes all reached the fingerprint. */
  private readonly decoded: Promise<boolean> | null = null;
  private bytes = 0;

  /** `maxBytes`: the most this layer reads by itself to finish a fingerprint. */
  constructor(
    private readonly req: Request,
    private readonly maxBytes: number,
  ) {
    const query = queryOf(req.originalUrl ?? req.url);
    if (req.is('multipart/form-data') && !req.readableEnded) {
      const raw = new RawBodyFingerprint(query, req.headers['content-type']);
      this.raw = raw;
      this.known = null;
      // A compressed body is fingerprinted decoded: its boundary is only found in the decoded
      // bytes, and the same form compressed again (another boundary) is the same request.
      const coding = requestContentCoding(req);
      const decoder =
        'coding' in coding && coding.coding !== null
          ? createBodyDecoder(coding.coding, maxBytes)
          : null;
      let feed = (chunk: Buffer): void => raw.update(chunk);
      if (decoder !== null) {
        let open = true;
        decoder.input.on('error', () => undefined); // reported by the output, below
        decoder.output.on('data', (chunk: Buffer) => raw.update(chunk));
        this.decoded = finished(decoder.output).then(
          () => true,
          () => {
            open = false; // corrupt or over the limit: no fingerprint (the answer is not stored)
            return false;
          },
        );
        feed = (chunk) => {
          if (open) decoder.input.write(chunk);
        };
        req.once('end', () => decoder.input.end());
      }
      // Paused first, so that listening does not start the flow before the handler reads.
      req.pause();
      req.on('data', (chunk: Buffer) => {
        this.bytes += chunk.length;
        feed(chunk);
      });
    } else {
      this.raw = null;
      this.known = jsonFingerprint(query, req.body);
    }
  }

  /**
   * The fingerprint, after reading the rest of the body; null when the body did not arrive whole,
   * or is larger than `maxBytes` (such a body is never read to the end for a fingerprint).
   */
  async complete(): Promise<string | null> {
    if (this.raw === null) return this.known;
    const req = this.req;
    if (!req.readableEnded) {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (req.destroyed || declared > this.maxBytes || this.bytes > this.maxBytes) return null;
      const whole = await new Promise<boolean>((resolve) => {
        const over = () => {
          if (this.bytes <= this.maxBytes) return;
          req.pause();
          req.off('data', over);
          resolve(false);
        };
        req.on('data', over);
        finished(req).then(
          () => resolve(true),
          () => resolve(false),
        );
        req.resume();
      });
      if (!whole) return null;
    }
    if (this.decoded !== null && !(await this.decoded)) return null;
    return this.raw.digest();
  }
}

/**
 * `Idempotency-Key` on POST requests (issue #18 §1). Runs the request's one transaction in place of
 * TransactionInterceptor when the header is present:
 *
 * 1. the key is validated (422 `validation_error`, `header.idempotency-key`);
 * 2. the transaction takes the key's advisory lock without waiting (scope: user, method, path, key),
 *    409 `idempotency_request_in_progress` when a request with the same key holds it (on any
 *    instance); the lock dies with the transaction, so a crashed request never blocks its retry;
 * 3. a stored, unexpired response: the same fingerprint gets it back byte for byte with
 *    `Idempotent-Replayed: true` (nothing runs), another fingerprint 422 `idempotency_key_reused`;
 * 4. otherwise the handler runs after a savepoint. Its result is serialised here and stored, in the
 *    same transaction, with the status and the Location header. A 4xx it throws is stored too: the
 *    work is rolled back to the savepoint and the problem body kept, then the transaction commits.
 *    A 5xx, a 413, or an answer to a body that did not arrive whole (or is larger than the body
 *    limits: it is never read to its end just for a fingerprint) is not stored: the transaction
 *    rolls back and a retry runs again.
 *
 * Answers given before the handler (401, and the guard's 413/415/422/404/403) are not stored: no
 * work started, and a retry is checked again (like Stripe, which saves a result only once the
 * endpoint began executing).
 */
@Injectable()
export class IdempotencyService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: IdempotencyRepository,
    private readonly problems: ProblemFilter,
  ) {}

  /**
   * True when the request carries a key this layer handles: a POST by an authenticated caller, to a
   * handler not declared {@link NotIdempotent}.
   */
  applies(req: Request, handler: object): boolean {
    return (
      req.method === 'POST' &&
      req.headers['idempotency-key'] !== undefined &&
      req.user !== undefined &&
      !isNotIdempotent(handler)
    );
  }

  /** Runs `handle` as described above; what it resolves to is what Nest sends. */
  async run(
    req: Request,
    res: Response,
    store: RequestStore,
    handle: () => Promise<unknown>,
  ): Promise<unknown> {
    const key = String(req.headers['idempotency-key']);
    const problem = idempotencyKeyProblem(key);
    if (problem !== null) {
      throw AppException.validation(
        { [IDEMPOTENCY_KEY_FIELD]: [problem] },
        `The Idempotency-Key header ${problem}`,
      );
    }
    const scope: IdempotencyScope = {
      principalId: (req.user as { id: string }).id,
      method: req.method,
      path: idempotencyPath(req),
      key,
    };
    const body = new BodyFingerprint(req, fingerprintReadLimit(this.config));
    const outcome = await this.dataSource.transaction(async (manager) => {
      store.manager = manager;
      try {
        return await this.underLock(scope, body, req, res, handle);
      } finally {
        store.manager = undefined;
      }
    });
    if (outcome instanceof PreparedResponse) throw outcome;
    return outcome;
  }

  private async underLock(
    scope: IdempotencyScope,
    body: BodyFingerprint,
    req: Request,
    res: Response,
    handle: () => Promise<unknown>,
  ): Promise<unknown> {
    if (!(await this.repository.tryLock(scope))) {
      throw new AppException(
        'idempotency_request_in_progress',
        'A request with this Idempotency-Key is still being processed; retry later',
        undefined,
        { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECONDS) },
      );
    }
    const stored = await this.repository.find(scope);
    if (stored !== null) {
      const fingerprint = await body.complete();
      if (fingerprint !== stored.fingerprint) {
        throw new AppException(
          'idempotency_key_reused',
          'This Idempotency-Key was used for another request (different body or query); use a new key',
        );
      }
      return new PreparedResponse(
        stored.status,
        { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
        stored.body,
      );
    }

    const db = this.repository;
    await db.savepoint();
    let result: unknown;
    try {
      result = await handle();
    } catch (error) {
      const answer = this.storableProblem(error, req);
      if (answer === null) throw error;
      const fingerprint = await body.complete();
      if (fingerprint === null) throw error;
      await db.rollbackToSavepoint();
      await db.save(scope, { ...answer, fingerprint }, this.config.idempotencyTtlHours);
      return new PreparedResponse(answer.status, answer.headers, answer.body);
    }
    const response = this.storableResult(result, res);
    if (response === null) return result;
    const fingerprint = await body.complete();
    if (fingerprint === null) return result;
    await db.save(scope, { ...response.stored, fingerprint }, this.config.idempotencyTtlHours);
    return response.send;
  }

  /**
   * The stored form of a handler's result and what to hand Nest in its place (the same bytes), or
   * null for results that are not JSON (streams, buffers, text: sent as they are, not stored).
   */
  private storableResult(
    result: unknown,
    res: Response,
  ): { stored: Omit<StoredResponse, 'fingerprint'>; send: unknown } | null {
    // A handler that answered by itself (@Res()) sent what it sent.
    if (res.headersSent) return null;
    const headers: Record<string, string> = {};
    const location = res.getHeader('location');
    if (typeof location === 'string') headers.Location = location;
    // A background import's 202 says which preference it applied (RFC 7240); the replay must too.
    const applied = res.getHeader('preference-applied');
    if (typeof applied === 'string') headers['Preference-Applied'] = applied;
    if (result === undefined || result === null) {
      return { stored: { status: res.statusCode, headers, body: Buffer.alloc(0) }, send: result };
    }
    if (result instanceof JsonBody) {
      // A JSON answer already in parts: its bytes are what is sent and what is stored.
      headers['Content-Type'] = JSON_CONTENT_TYPE;
      return { stored: { status: res.statusCode, headers, body: result.toBuffer() }, send: result };
    }
    if (typeof result !== 'object' || Buffer.isBuffer(result) || !isPlainResult(result))
      return null;
    // What Express's res.json sends for it (JSON.stringify without replacer or spaces, UTF-8):
    // the handler's result goes out as it is, and these are its bytes.
    headers['Content-Type'] = JSON_CONTENT_TYPE;
    return {
      stored: {
        status: res.statusCode,
        headers,
        body: Buffer.from(JSON.stringify(result), 'utf8'),
      },
      send: result,
    };
  }

  /** The problem a thrown 4xx answers (status, headers, bytes), or null when it is not stored. */
  private storableProblem(
    error: unknown,
    req: Request,
  ): Omit<StoredResponse, 'fingerprint'> | null {
    // The caller's access is checked again on every retry (CONTRACT §3: 404 and 403 come before
    // the work); only the guard checks it on most routes, the service on a few (POST /run-cases).
    if (error instanceof AccessRefusal) return null;
    // A streamed multipart form's fields, refused as the guard refuses a JSON body's: not stored.
    if (error instanceof FormRefusal) return null;
    let clientError: boolean;
    if (error instanceof AppException) clientError = error.status >= 400 && error.status < 500;
    else if (error instanceof HttpException)
      clientError = error.getStatus() >= 400 && error.getStatus() < 500;
    else if (error instanceof QueryFailedError) {
      const sqlstate = (error.driverError as { code?: unknown } | undefined)?.code;
      clientError = typeof sqlstate === 'string' && isDeterministicRefusal(sqlstate);
    } else clientError = false;
    if (!clientError) return null;
    const problem = this.problems.toProblem(error, req);
    // 413: the body was too large to read whole (and to fingerprint); like the guard's, not stored.
    if (problem.status < 400 || problem.status >= 500 || problem.status === 413) return null;
    return {
      status: problem.status,
      headers: { ...problem.headers, 'Content-Type': PROBLEM_TYPE },
      body: Buffer.from(JSON.stringify(problem.body), 'utf8'),
    };
  }

  /**
   * Deletes expired keys in batches until none is left (see IdempotencyPurger). Returns how many.
   */
  async purgeExpired(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.repository.purgeExpiredBatch();
      total += deleted;
      if (deleted < IDEMPOTENCY_PURGE_BATCH) return total;
    }
  }
}
