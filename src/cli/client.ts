import { CliError } from './errors';
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

/** The server refused the request (4xx) or failed (5xx after the retries). */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(
      renderProblem(status, body),
      status >= 500 || status === 429 ? EXIT.UNAVAILABLE : EXIT.REFUSED,
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

function problemCode(body: unknown): string | null {
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
   * One request, tried again on network errors, 429, 5xx and 409 `idempotency_request_in_progress`
   * (at most `retries` times, after the server's `Retry-After` or an exponential backoff). Answers a
   * 2xx; throws ApiError for any other final answer, CliError (exit 3) when unreachable.
   */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const url = this.url(path, opts.query);
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (this.apiKey) headers['X-API-Key'] = this.apiKey;
    if (opts.json !== undefined) headers['Content-Type'] = 'application/json';
    for (let attempt = 0; ; attempt += 1) {
      let res: Response;
      try {
        res = await this.io.fetch(url, {
          method,
          headers,
          body: opts.form
            ? opts.form()
            : opts.json !== undefined
              ? JSON.stringify(opts.json)
              : undefined,
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: 'follow',
        });
      } catch (err) {
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
      const body = await readBody(res);
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
