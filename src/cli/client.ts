import { CliError, UsageError } from './errors';
import { EXIT } from './exit-codes';
import { renderProblem } from './render';
import { isRetryableStatus, retryDelayMs } from './retry';

/** What `tms` needs from its surroundings: injected so that tests run it in-process. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  fetch: typeof fetch;
  sleep(ms: number): Promise<void>;
  random(): number;
  now(): number;
}

/** Default deadline of one HTTP request (`--timeout` changes it). */
export const DEFAULT_TIMEOUT_SECONDS = 300;
/** The API's path prefix. */
export const API_PREFIX = '/api/v1';

/**
 * The server refused the request (4xx: exit 2), or still answered a transient one after the
 * retries (5xx, 429, 409 `idempotency_request_in_progress`: exit 3, running the step again may
 * get through).
 */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(
      renderProblem(status, body),
      isRetryableStatus(status, problemCode(body)) ? EXIT.UNAVAILABLE : EXIT.REFUSED,
    );
  }
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface RequestOptions {
  query?: Record<string, string | string[] | undefined>;
  json?: unknown;
  /** Built again for every attempt. */
  form?: () => FormData;
  headers?: Record<string, string>;
}

/** Most redirects one request follows (within the server's origin). */
const MAX_REDIRECTS = 5;

function requestBody(opts: RequestOptions): FormData | string | undefined {
  if (opts.form) return opts.form();
  return opts.json !== undefined ? JSON.stringify(opts.json) : undefined;
}

/** Where a redirect answer points (absolute), or null for any other answer. */
function redirectTarget(res: Response, from: string): URL | null {
  if (![301, 302, 303, 307, 308].includes(res.status)) return null;
  const location = res.headers.get('location');
  return location === null ? null : new URL(location, from);
}

export function problemCode(body: unknown): string | null {
  return body !== null &&
    typeof body === 'object' &&
    typeof (body as { code?: unknown }).code === 'string'
    ? (body as { code: string }).code
    : null;
}

export class Api {
  private readonly root: string;

  constructor(
    url: string,
    private readonly apiKey: string | undefined,
    private readonly retries: number,
    private readonly timeoutMs: number,
    private readonly io: Io,
  ) {
    const trimmed = url.replace(/\/+$/, '');
    this.root = trimmed.endsWith(API_PREFIX) ? trimmed.slice(0, -API_PREFIX.length) : trimmed;
    // Refused here, not sent: fetch would fail on them before any request, and its message (which
    // a retry loop would print as a network error) quotes the key or the URL's password.
    if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) {
      throw new UsageError(
        'tms: the API key (TMS_API_KEY) holds a character an HTTP header cannot carry ' +
          '(a space, a line break or a non-ASCII character)\n',
      );
    }
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(trimmed)) {
      throw new UsageError(
        'tms: the server URL must not carry a user name or password; give the API key with TMS_API_KEY\n',
      );
    }
  }

  /** The absolute URL of an API path (`/test-runs/…`) or of a `Location` the server answered. */
  url(pathOrLocation: string, query?: RequestOptions['query']): string {
    const u = pathOrLocation.startsWith(API_PREFIX + '/')
      ? new URL(this.root + pathOrLocation)
      : /^https?:\/\//.test(pathOrLocation)
        ? new URL(pathOrLocation)
        : new URL(this.root + API_PREFIX + pathOrLocation);
    for (const [k, v] of Object.entries(query ?? {})) {
      for (const item of Array.isArray(v) ? v : v === undefined ? [] : [v])
        u.searchParams.append(k, item);
    }
    return u.toString();
  }

  /**
   * One request, tried again on network errors (a failure while the answer's body is read counts),
   * 429, 5xx and 409 `idempotency_request_in_progress` (at most `retries` times, after the server's
   * `Retry-After` or an exponential backoff). Redirects are followed within the server's origin
   * only: the API key is never sent to another one. Answers a 2xx; throws ApiError for any other
   * final answer, CliError (exit 3) when unreachable.
   */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (this.apiKey) headers['X-API-Key'] = this.apiKey;
    if (opts.json !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 0; ; attempt += 1) {
      let url = this.url(path, opts.query);
      let res: Response;
      let body: unknown;
      try {
        let sent = method;
        for (let hop = 0; ; hop += 1) {
          res = await this.io.fetch(url, {
            method: sent,
            headers,
            body: sent === method ? requestBody(opts) : undefined,
            signal: AbortSignal.timeout(this.timeoutMs),
            redirect: 'manual',
          });
          const next = redirectTarget(res, url);
          if (next === null) break;
          await res.body?.cancel();
          if (next.origin !== new URL(url).origin) {
            throw new CliError(
              `tms: ${url} redirects to ${next.origin}; tms does not send the API key to another ` +
                `origin: give that address with --url\n`,
              EXIT.REFUSED,
            );
          }
          if (hop >= MAX_REDIRECTS) {
            throw new CliError(`tms: ${url}: more than ${MAX_REDIRECTS} redirects\n`, EXIT.REFUSED);
          }
          // As fetch does: 307/308 repeat the request, the others continue with a GET.
          if (res.status !== 307 && res.status !== 308) sent = 'GET';
          url = next.toString();
        }
        body = await readBody(res);
      } catch (err) {
        if (err instanceof CliError) throw err;
        const cause =
          err instanceof Error
            ? ((err.cause as Error | undefined)?.message ?? err.message)
            : String(err);
        if (attempt < this.retries) {
          await this.wait(attempt + 1, null, `${method} ${url} failed (${cause})`);
          continue;
        }
        throw new CliError(`tms: cannot reach ${url}: ${cause}\n`, EXIT.UNAVAILABLE);
      }
      if (res.ok) return { status: res.status, headers: res.headers, body };
      if (isRetryableStatus(res.status, problemCode(body)) && attempt < this.retries) {
        await this.wait(
          attempt + 1,
          res.headers.get('retry-after'),
          `${method} ${url} answered ${res.status}`,
        );
        continue;
      }
      throw new ApiError(res.status, body);
    }
  }

  private async wait(retry: number, retryAfter: string | null, why: string): Promise<void> {
    const ms = retryDelayMs(retry, retryAfter, this.io.now(), this.io.random());
    this.io.stderr(`tms: ${why}; retry ${retry}/${this.retries} in ${(ms / 1000).toFixed(1)} s\n`);
    await this.io.sleep(ms);
  }
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return null;
  if (/json/i.test(res.headers.get('content-type') ?? '')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
