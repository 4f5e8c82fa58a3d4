import { randomBytes } from 'node:crypto';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isWellFormedText } from '../common/validation/well-formed';

/** Typed, validated configuration (CONTRACT §1). Read once at boot; never from `process.env` elsewhere. */
export interface AppConfig {
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  embeddedPgPort: number;
  authSecret: string;
  accessTokenTtlSeconds: number;
  adminUsername: string;
  adminPassword: string | null;
  errorBaseUrl: string;
  maxUploadBytes: number;
  /** Files (`file` parts) one import request may carry (MAX_UPLOAD_FILES, default 1000; 413 beyond). */
  maxUploadFiles: number;
  /** Background imports (`Prefer: respond-async`, issue #18 §3): see {@link ImportJobsConfig}. */
  importJobs: ImportJobsConfig;
  maxJsonBytes: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * How log lines are written (LOG_FORMAT): `json` (default), one pino JSON object per line, or
   * `pretty`, the same lines made readable for a human at a terminal (pino-pretty).
   */
  logFormat: LogFormat;
  corsOrigins: string[];
  /**
   * Send the statements of the per-request hot path as named prepared statements (DB_PREPARED_STATEMENTS).
   * Turn off behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).
   */
  dbPreparedStatements: boolean;
  /** Most database connections of this instance (DB_POOL_SIZE). */
  dbPoolSize: number;
  /**
   * Most report downloads this instance reads at once (EXPORT_CONCURRENCY; default a quarter of
   * the pool, at least 1): each holds a pooled connection while its client reads.
   */
  exportConcurrency: number;
  /**
   * Deadlines of the database connections (CONTRACT §1, issue #22): a stalled database answers 503
   * `database_unavailable` instead of holding requests forever. Migrations at startup have none.
   */
  db: DbDeadlines;
  /** How long GET /readyz waits for the database before answering 503 (READINESS_TIMEOUT_MS). */
  readinessTimeoutMs: number;
  /**
   * How long a stored `Idempotency-Key` response is replayed (IDEMPOTENCY_TTL_HOURS, hours): after
   * that the key is free again and expired keys are purged.
   */
  idempotencyTtlHours: number;
  /**
   * Bound of the in-process cache of projects' component graphs (COMPONENT_GRAPH_CACHE_BYTES,
   * approximate bytes; 0 turns it off): `GET /components/graph` answers and the cycle check's index,
   * kept per (project, graph version).
   */
  componentGraphCacheBytes: number;
  /**
   * Bound of the in-process cache of environment revisions' snapshots as the JSON bytes runs answer
   * (SNAPSHOT_CACHE_BYTES, bytes; 0 turns it off): GET of a run and run list pages.
   */
  snapshotCacheBytes: number;
  /**
   * Port of the separate Prometheus `/metrics` server (METRICS_PORT; null: no metrics server, the
   * default; 0: any free port). The API port never serves `/metrics`.
   */
  metricsPort: number | null;
  /** Address the metrics server binds to (METRICS_HOST, default 127.0.0.1). */
  metricsHost: string;
  /**
   * Directory of the built dashboard served at /app (WEB_DIR; default: the package's dist/web,
   * written by `npm run build`). null: the default.
   */
  webDir: string | null;
  /** Login throttling (issue #24 §2): see {@link LoginThrottleConfig}. */
  loginThrottle: LoginThrottleConfig;
  /**
   * Express's `trust proxy` (TRUST_PROXY; default off): whom to believe about the client address in
   * `X-Forwarded-For`. Behind a reverse proxy it must be set, or every client has the proxy's address
   * (login throttling per address, logs).
   */
  trustProxy: TrustProxy;
  /** Accepted but doubtful settings, printed once at startup. */
  /** The job queue (background imports, webhook deliveries): see {@link JobsConfig}. */
  jobs: JobsConfig;
  /** Webhook deliveries (issue #20): see {@link WebhooksConfig}. */
  webhooks: WebhooksConfig;
  warnings: string[];
}

export interface WebhooksConfig {
  /**
   * Allow webhook URLs whose host is (or resolves to) a loopback, private, link-local, multicast or
   * unspecified address (WEBHOOK_ALLOW_PRIVATE, default false).
   */
  allowPrivate: boolean;
  /** Attempts per event and subscription, the first included (WEBHOOK_MAX_ATTEMPTS, default 8). */
  maxAttempts: number;
  /** Wait before the first retry, doubling after each (WEBHOOK_RETRY_BASE_SECONDS, default 60). */
  retryBaseSeconds: number;
}

export interface ImportJobsConfig {
  /**
   * Seconds a background import may run before the job queue hands it to another instance
   * (IMPORT_JOB_EXPIRE_SECONDS, default 900): the time after which an import whose instance died is
   * retried (plus up to the queue's 2-minute maintenance interval). It must exceed the longest
   * honest import; an import still running past it is retried too, and the retry waits for it and
   * then does nothing (applied once).
   */
  expireInSeconds: number;
  /** Retries of a background import after an unexpected failure (IMPORT_JOB_RETRIES, default 3). */
  retryLimit: number;
}

export interface JobsConfig {
  /**
   * Whether this instance runs queued jobs (JOB_WORKERS, default true). An instance with `false`
   * still enqueues; another instance runs the jobs.
   */
  workers: boolean;
  /** How often an idle worker asks the queue for a job (JOB_POLL_INTERVAL_SECONDS, default 2). */
  pollIntervalSeconds: number;
}

/** The deadlines every pooled database connection of the service gets. */
export interface DbDeadlines {
  /** Server-side limit of one statement (DB_STATEMENT_TIMEOUT_MS; PostgreSQL's statement_timeout). */
  statementTimeoutMs: number;
  /**
   * Client-side limit of one query, answer included (DB_QUERY_TIMEOUT_MS; pg's query_timeout): it
   * catches a server that never answers (frozen, or unreachable with the socket still open).
   */
  queryTimeoutMs: number;
  /**
   * Client-side limit of one read outside a transaction (every GET; DB_READ_TIMEOUT_MS): shorter
   * than the query deadline, so that reads from a frozen database answer 503 within a few seconds
   * while the statements of a large import keep the longer one.
   */
  readTimeoutMs: number;
  /** Opening a connection, or waiting for a free one in the pool (DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /**
   * PostgreSQL ends a session whose transaction stays idle longer (DB_IDLE_IN_TRANSACTION_TIMEOUT_MS;
   * idle_in_transaction_session_timeout), releasing its locks.
   */
  idleInTransactionTimeoutMs: number;
}

/** Default DB_STATEMENT_TIMEOUT_MS: 30 s per statement (the slowest ones measured take about 1 s). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** DB_QUERY_TIMEOUT_MS defaults to the statement timeout plus this margin for the server's answer. */
export const QUERY_TIMEOUT_MARGIN_MS = 2_000;
/** Default DB_READ_TIMEOUT_MS (capped at DB_QUERY_TIMEOUT_MS). */
export const DEFAULT_READ_TIMEOUT_MS = 5_000;
/** Default DB_CONNECT_TIMEOUT_MS. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Default DB_IDLE_IN_TRANSACTION_TIMEOUT_MS. */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** Default READINESS_TIMEOUT_MS. */
export const DEFAULT_READINESS_TIMEOUT_MS = 2_000;
/** Default life of a stored idempotent response (IDEMPOTENCY_TTL_HOURS): 24 hours. */
export const DEFAULT_IDEMPOTENCY_TTL_HOURS = 24;
/** Longest accepted IDEMPOTENCY_TTL_HOURS: 30 days. */
export const MAX_IDEMPOTENCY_TTL_HOURS = 720;
/** Default bound of the component graph cache (COMPONENT_GRAPH_CACHE_BYTES): 64 MiB. */
export const DEFAULT_COMPONENT_GRAPH_CACHE_BYTES = 64 * 1024 * 1024;
/** Largest accepted COMPONENT_GRAPH_CACHE_BYTES: 16 GiB. */
export const MAX_COMPONENT_GRAPH_CACHE_BYTES = 16 * 1024 * 1024 * 1024;

/** Default bound of the revision snapshot cache (SNAPSHOT_CACHE_BYTES): 64 MiB. */
export const DEFAULT_SNAPSHOT_CACHE_BYTES = 64 * 1024 * 1024;
/** Largest accepted SNAPSHOT_CACHE_BYTES: 16 GiB. */
export const MAX_SNAPSHOT_CACHE_BYTES = 16 * 1024 * 1024 * 1024;

/** Shortest accepted AUTH_SECRET, in bytes (UTF-8): HS256 wants a key of at least 256 bits. */
export const MIN_AUTH_SECRET_BYTES = 32;
/** Default METRICS_HOST: the metrics server answers this machine only unless told otherwise. */
export const DEFAULT_METRICS_HOST = '127.0.0.1';

/**
 * Every AUTH_SECRET value that appears as an example in this repository's documentation, compose
 * file or Dockerfile, now or in the past: anyone can read them, so the service refuses to sign
 * tokens with them. `test/unit/example-secrets.spec.ts` fails when a document shows a value that is
 * not listed here.
 */
export const EXAMPLE_AUTH_SECRETS: readonly string[] = [
  // docker-compose.yml's fallback until issue #24.
  'change-me-to-a-long-random-secret-of-32-chars',
];

/** Variables that may instead be read from a file named by `<NAME>_FILE` (Docker secrets). */
export const FILE_VARIABLES = ['AUTH_SECRET', 'ADMIN_PASSWORD', 'DATABASE_URL'] as const;

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The values of LOG_FORMAT; the first is the default. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** LOG_FORMAT, validated: `json` (default) or `pretty`, in any case. */
export function logFormatOf(env: Record<string, string | undefined>): LogFormat {
  const raw = (env.LOG_FORMAT ?? '').trim().toLowerCase() || LOG_FORMATS[0];
  if (!(LOG_FORMATS as readonly string[]).includes(raw)) {
    throw new ConfigError(`LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}, got "${raw}"`);
  }
  return raw as LogFormat;
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const v = env[name];
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function num(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return def;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return def;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/**
 * The environment with every `<NAME>_FILE` of FILE_VARIABLES replaced by `<NAME>` holding the
 * file's content (one trailing newline removed). Both set, or an unreadable file, is a ConfigError
 * naming the variable; the content is never part of a message.
 */
export function resolveFileVariables(env: Env): Env {
  const out: Env = { ...env };
  for (const name of FILE_VARIABLES) {
    const fileName = `${name}_FILE`;
    const path = env[fileName];
    if (path === undefined || path.trim() === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      throw new ConfigError(`Set either ${name} or ${fileName}, not both`);
    }
    let content: string;
    try {
      content = readFileSync(path.trim(), 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new ConfigError(`${fileName}: cannot read the file ${path.trim()} (${code})`);
    }
    out[name] = content.replace(/\r?\n$/, '');
    delete out[fileName];
  }
  return out;
}

/** Why an AUTH_SECRET is refused, or null when it is acceptable. */
export function authSecretProblem(secret: string): string | null {
  if (EXAMPLE_AUTH_SECRETS.includes(secret)) {
    return 'AUTH_SECRET is an example value published in the documentation; generate your own (openssl rand -base64 48)';
  }
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_AUTH_SECRET_BYTES) {
    return `AUTH_SECRET must be at least ${MIN_AUTH_SECRET_BYTES} bytes long, got ${bytes}; generate one with openssl rand -base64 48`;
  }
  return null;
}

/**
 * Validates the environment and returns the typed configuration.
 * A bad value throws a ConfigError naming the variable; main.ts prints it and exits 1.
 * `generateSecret` persists a generated AUTH_SECRET under DATA_DIR (embedded mode only).
 */
export function loadConfig(
  rawEnv: Env = process.env,
  opts: { persistSecret?: boolean } = {},
): AppConfig {
  const env = resolveFileVariables(rawEnv);
  const databaseUrl = text(env, 'DATABASE_URL') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const urlProblem = databaseUrl === null ? null : databaseUrlProblem(databaseUrl);
  // Never the value: it holds the password.
  if (urlProblem !== null) throw new ConfigError(`DATABASE_URL ${urlProblem}`);
  const dataDir = resolve(text(env, 'DATA_DIR') ?? './.data');
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const warnings: string[] = [];
  const errorBaseUrl = (text(env, 'ERROR_BASE_URL') ?? 'https://tms.local/errors').replace(
    /\/+$/,
    '',
  );
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(errorBaseUrl)) {
    throw new ConfigError(
      `ERROR_BASE_URL must be an absolute URI such as https://tms.local/errors, got "${errorBaseUrl}"`,
    );
  }
  const adminUsername = text(env, 'ADMIN_USERNAME') ?? 'admin';
  const usernameProblem = adminUsernameProblem(adminUsername);
  if (usernameProblem !== null) throw new ConfigError(`ADMIN_USERNAME ${usernameProblem}`);
  const adminPassword =
    env.ADMIN_PASSWORD && env.ADMIN_PASSWORD.length > 0 ? env.ADMIN_PASSWORD : null;
  const passwordChars = adminPassword === null ? 0 : [...adminPassword].length;
  // Never the value. The login refuses such a password: this administrator could never log in.
  if (passwordChars > MAX_PASSWORD_CHARS) {
    throw new ConfigError(
      `ADMIN_PASSWORD must be at most ${MAX_PASSWORD_CHARS} characters long (the longest password the login accepts), got ${passwordChars}`,
    );
  }
  if (adminPassword !== null && !isWellFormedText(adminPassword)) {
    throw new ConfigError('ADMIN_PASSWORD must not contain unpaired UTF-16 surrogates');
  }
  if (adminPassword !== null && passwordChars < 10) {
    // Accepted (the operator chose it), but users' own passwords need 10 characters.
    warnings.push('ADMIN_PASSWORD is shorter than 10 characters; change it after the first login');
  }

  let authSecret = text(env, 'AUTH_SECRET');
  if (authSecret !== undefined) {
    const problem = authSecretProblem(authSecret);
    if (problem !== null) throw new ConfigError(problem);
  }
  if (authSecret === undefined) {
    if (databaseUrl !== null) {
      throw new ConfigError('AUTH_SECRET is required when DATABASE_URL is set');
    }
    authSecret =
      opts.persistSecret === false ? randomBytes(32).toString('hex') : persistedSecret(dataDir);
  }

  const corsOrigins = (text(env, 'CORS_ORIGINS') ?? '')
    .split(',')
    .map((s) => s.trim().replace(/\/+$/, ''))
    .filter((s) => s.length > 0);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin) && origin !== '*') {
      throw new ConfigError(
        `CORS_ORIGINS entries must be origins like https://app.example.com, got "${origin}"`,
      );
    }
  }

  const host = text(env, 'HOST') ?? '0.0.0.0';
  // A host name, an IPv4 address or an IPv6 address (with or without brackets).
  if (!isHostOrAddress(host)) {
    throw new ConfigError(
      `HOST must be a host name or an IP address such as 0.0.0.0 or ::, got "${host}"`,
    );
  }

  const metricsPort =
    text(env, 'METRICS_PORT') === undefined ? null : int(env, 'METRICS_PORT', 0, 0, 65535);
  const metricsHost = text(env, 'METRICS_HOST') ?? DEFAULT_METRICS_HOST;
  if (!isHostOrAddress(metricsHost)) {
    throw new ConfigError(
      `METRICS_HOST must be a host name or an IP address such as 127.0.0.1, got "${metricsHost}"`,
    );
  }

  const statementTimeoutMs = int(
    env,
    'DB_STATEMENT_TIMEOUT_MS',
    DEFAULT_STATEMENT_TIMEOUT_MS,
    100,
    86_400_000,
  );
  const queryTimeoutMs = int(
    env,
    'DB_QUERY_TIMEOUT_MS',
    statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    100,
    86_400_000 + QUERY_TIMEOUT_MARGIN_MS,
  );
  if (queryTimeoutMs < statementTimeoutMs) {
    // The client would give up (and drop the connection) before PostgreSQL cancels the statement.
    throw new ConfigError(
      `DB_QUERY_TIMEOUT_MS (${queryTimeoutMs}) must be at least DB_STATEMENT_TIMEOUT_MS (${statementTimeoutMs})`,
    );
  }
  const readTimeoutMs = int(
    env,
    'DB_READ_TIMEOUT_MS',
    Math.min(DEFAULT_READ_TIMEOUT_MS, queryTimeoutMs),
    100,
    86_400_000 + QUERY_TIMEOUT_MARGIN_MS,
  );
  if (readTimeoutMs > queryTimeoutMs) {
    throw new ConfigError(
      `DB_READ_TIMEOUT_MS (${readTimeoutMs}) must not exceed DB_QUERY_TIMEOUT_MS (${queryTimeoutMs})`,
    );
  }
  const db: DbDeadlines = {
    statementTimeoutMs,
    queryTimeoutMs,
    readTimeoutMs,
    connectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', DEFAULT_CONNECT_TIMEOUT_MS, 100, 600_000),
    idleInTransactionTimeoutMs: int(
      env,
      'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
      DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      100,
      86_400_000,
    ),
  };

  const port = int(env, 'PORT', 3000, 0, 65535);
  const dbPoolSize = int(env, 'DB_POOL_SIZE', 20, 1, 1000);
  const wildcard = (h: string) => ['0.0.0.0', '::', '[::]'].includes(h);
  if (
    metricsPort !== null &&
    metricsPort !== 0 &&
    metricsPort === port &&
    (metricsHost === host || wildcard(host) || wildcard(metricsHost))
  ) {
    throw new ConfigError(
      `METRICS_PORT must differ from PORT (${port}): metrics are served on a port of their own`,
    );
  }

  return {
    port,
    host,
    databaseUrl,
    dataDir,
    webDir: text(env, 'WEB_DIR') === undefined ? null : resolve(text(env, 'WEB_DIR')!),
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 5433, 1, 65535),
    authSecret,
    accessTokenTtlSeconds: int(env, 'ACCESS_TOKEN_TTL_SECONDS', 28800, 1, 31_536_000),
    adminUsername,
    adminPassword,
    errorBaseUrl,
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 67_108_864, 1, 4_294_967_296),
    maxUploadFiles: int(env, 'MAX_UPLOAD_FILES', 1000, 1, 100_000),
    importJobs: {
      expireInSeconds: int(env, 'IMPORT_JOB_EXPIRE_SECONDS', 900, 1, 86_399),
      retryLimit: int(env, 'IMPORT_JOB_RETRIES', 3, 0, 100),
    },
    maxJsonBytes: int(env, 'MAX_JSON_BYTES', 5_242_880, 1, 1_073_741_824),
    logLevel: logLevel as AppConfig['logLevel'],
    logFormat: logFormatOf(env),
    corsOrigins,
    dbPreparedStatements: bool(env, 'DB_PREPARED_STATEMENTS', true),
    dbPoolSize,
    exportConcurrency: int(env, 'EXPORT_CONCURRENCY', Math.max(1, Math.floor(dbPoolSize / 4)), 1, 1000),
    db,
    readinessTimeoutMs: int(env, 'READINESS_TIMEOUT_MS', DEFAULT_READINESS_TIMEOUT_MS, 100, 60_000),
    idempotencyTtlHours: int(
      env,
      'IDEMPOTENCY_TTL_HOURS',
      DEFAULT_IDEMPOTENCY_TTL_HOURS,
      1,
      MAX_IDEMPOTENCY_TTL_HOURS,
    ),
    componentGraphCacheBytes: int(
      env,
      'COMPONENT_GRAPH_CACHE_BYTES',
      DEFAULT_COMPONENT_GRAPH_CACHE_BYTES,
      0,
      MAX_COMPONENT_GRAPH_CACHE_BYTES,
    ),
    snapshotCacheBytes: int(
      env,
      'SNAPSHOT_CACHE_BYTES',
      DEFAULT_SNAPSHOT_CACHE_BYTES,
      0,
      MAX_SNAPSHOT_CACHE_BYTES,
    ),
    metricsPort,
    metricsHost,
    loginThrottle: loginThrottleConfig(env),
    trustProxy: trustProxyConfig(env),
    jobs: {
      workers: bool(env, 'JOB_WORKERS', true),
      pollIntervalSeconds: num(env, 'JOB_POLL_INTERVAL_SECONDS', 2, 0.5, 600),
    },
    webhooks: {
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      maxAttempts: int(env, 'WEBHOOK_MAX_ATTEMPTS', 8, 1, 20),
      retryBaseSeconds: int(env, 'WEBHOOK_RETRY_BASE_SECONDS', 60, 1, 86_400),
    },
    warnings,
  };
}

function persistedSecret(dataDir: string): string {
  const file = join(dataDir, 'auth-secret');
  if (existsSync(file)) {
    const s = readFileSync(file, 'utf8').trim();
    if (authSecretProblem(s) === null) return s;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/**
 * Login throttling (issue #24 §2; POST /auth/login): failed logins are counted in PostgreSQL per
 * username and per client address. When a count reaches its maximum within the window, the next
 * attempts are refused (429 `too_many_attempts`, Retry-After) for `lockoutSeconds`; every further
 * failure after a lockout doubles it, up to `maxLockoutSeconds`. A count is forgotten `windowSeconds`
 * after its first failure or after the end of its last lockout, whichever is later; a successful
 * login forgets the username's count (not the address's).
 */
export interface LoginThrottleConfig {
  /** Failures per username before a lockout (LOGIN_MAX_FAILURES; 0 turns the per-username count off). */
  maxFailuresPerUser: number;
  /** Failures per client address before a lockout (LOGIN_MAX_FAILURES_PER_ADDRESS; 0: off). */
  maxFailuresPerAddress: number;
  /** LOGIN_WINDOW_SECONDS. */
  windowSeconds: number;
  /** First lockout (LOGIN_LOCKOUT_SECONDS). */
  lockoutSeconds: number;
  /** Longest lockout (LOGIN_MAX_LOCKOUT_SECONDS). */
  maxLockoutSeconds: number;
}

/** Default LOGIN_MAX_FAILURES. */
export const DEFAULT_LOGIN_MAX_FAILURES = 10;
/** Default LOGIN_MAX_FAILURES_PER_ADDRESS (several users may share an address: an office's NAT). */
export const DEFAULT_LOGIN_MAX_FAILURES_PER_ADDRESS = 50;
/** Default LOGIN_WINDOW_SECONDS: 15 minutes. */
export const DEFAULT_LOGIN_WINDOW_SECONDS = 900;
/** Default LOGIN_LOCKOUT_SECONDS. */
export const DEFAULT_LOGIN_LOCKOUT_SECONDS = 60;
/** Default LOGIN_MAX_LOCKOUT_SECONDS: 1 hour. */
export const DEFAULT_LOGIN_MAX_LOCKOUT_SECONDS = 3600;
/** Largest accepted LOGIN_WINDOW_SECONDS, LOGIN_LOCKOUT_SECONDS and LOGIN_MAX_LOCKOUT_SECONDS: 1 day. */
export const MAX_LOGIN_THROTTLE_SECONDS = 86_400;

function loginThrottleConfig(env: Env): LoginThrottleConfig {
  const lockoutSeconds = int(
    env,
    'LOGIN_LOCKOUT_SECONDS',
    DEFAULT_LOGIN_LOCKOUT_SECONDS,
    1,
    MAX_LOGIN_THROTTLE_SECONDS,
  );
  const maxLockoutSeconds = int(
    env,
    'LOGIN_MAX_LOCKOUT_SECONDS',
    Math.max(DEFAULT_LOGIN_MAX_LOCKOUT_SECONDS, lockoutSeconds),
    1,
    MAX_LOGIN_THROTTLE_SECONDS,
  );
  if (maxLockoutSeconds < lockoutSeconds) {
    throw new ConfigError(
      `LOGIN_MAX_LOCKOUT_SECONDS (${maxLockoutSeconds}) must be at least LOGIN_LOCKOUT_SECONDS (${lockoutSeconds})`,
    );
  }
  return {
    maxFailuresPerUser: int(env, 'LOGIN_MAX_FAILURES', DEFAULT_LOGIN_MAX_FAILURES, 0, 1_000_000),
    maxFailuresPerAddress: int(
      env,
      'LOGIN_MAX_FAILURES_PER_ADDRESS',
      DEFAULT_LOGIN_MAX_FAILURES_PER_ADDRESS,
      0,
      1_000_000,
    ),
    windowSeconds: int(
      env,
      'LOGIN_WINDOW_SECONDS',
      DEFAULT_LOGIN_WINDOW_SECONDS,
      1,
      MAX_LOGIN_THROTTLE_SECONDS,
    ),
    lockoutSeconds,
    maxLockoutSeconds,
  };
}

/** Express's `trust proxy` setting: off, on (any proxy), a number of hops, or trusted addresses. */
export type TrustProxy = boolean | number | string[];

/**
 * TRUST_PROXY: `false` (default), `true` (trust every proxy: only when the service is reachable
 * through the proxy alone), a whole number of proxy hops, or a comma-separated list of proxy
 * addresses or subnets (`10.0.0.0/8`, `loopback`, `linklocal`, `uniquelocal`).
 */
function trustProxyConfig(env: Env): TrustProxy {
  const raw = text(env, 'TRUST_PROXY');
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (lower === 'false' || lower === '0') return false;
  if (lower === 'true') return true;
  if (/^\d+$/.test(raw)) return int(env, 'TRUST_PROXY', 0, 0, 100);
  const entries = raw.split(',').map((e) => e.trim());
  for (const entry of entries) {
    if (!isTrustedProxyEntry(entry)) {
      throw new ConfigError(
        `TRUST_PROXY must be true, false, a number of hops or a comma-separated list of addresses or subnets, got "${raw}"`,
      );
    }
  }
  return entries;
}

/**
 * The user name and password rules of the users API (`CreateUserDto`, `LoginDto` in
 * modules/users/dto/user.dto.ts), which the bootstrap administrator must meet too: a name or
 * password they refuse would create an administrator who can never log in. Characters are counted
 * as PostgreSQL (and `MaxLen`) count them: code points.
 */
const MIN_USERNAME_CHARS = 3;
const MAX_USERNAME_CHARS = 64;
const MAX_PASSWORD_CHARS = 256;
/** Printable text without line breaks, tabs or other control or format characters. */
const USERNAME_RE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

/** Why ADMIN_USERNAME (already trimmed, like the API trims it) breaks the user name rules, or null. */
export function adminUsernameProblem(username: string): string | null {
  const chars = [...username].length;
  if (chars < MIN_USERNAME_CHARS || chars > MAX_USERNAME_CHARS) {
    return `must be ${MIN_USERNAME_CHARS} to ${MAX_USERNAME_CHARS} characters long, got ${chars}`;
  }
  if (!isWellFormedText(username) || !USERNAME_RE.test(username)) {
    return 'must not contain control characters (line breaks, tabs, format characters) or unpaired surrogates';
  }
  return null;
}

/** Injection token for AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

const NOT_A_URL =
  'is not a valid URL (check the port and that special characters of the password are percent-encoded)';

/**
 * Why a postgres:// URL cannot be used (no host, a bad port, not a URL), or null. Never quotes the
 * URL: it holds the password.
 */
export function databaseUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return NOT_A_URL;
  }
  // The driver percent-decodes these parts (a `%` that starts no escape, as in `abc%zz`, would stop
  // the start with "URI malformed"): a literal `%` must be written `%25`.
  for (const part of [parsed.username, parsed.password, parsed.hostname, parsed.pathname]) {
    try {
      decodeURIComponent(part);
    } catch {
      return NOT_A_URL;
    }
  }
  if (parsed.hostname === '') return 'names no host (postgres://user:password@host:5432/database)';
  if (parsed.port !== '' && Number(parsed.port) === 0) return 'has port 0';
  return null;
}

const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/**
 * A host name, an IPv4 address or an IPv6 address (with or without brackets, with a zone): what
 * `listen` can bind. Something made of digits and dots only must be a valid IPv4 address
 * (`999.999.999.999` is not a host name either).
 */
export function isHostOrAddress(value: string): boolean {
  if (/^[\d.]+$/.test(value)) return isIPv4(value);
  if (value.includes(':')) return isIPv6(value.replace(/^\[(.*)\]$/, '$1').replace(/%\w+$/, ''));
  return HOST_NAME.test(value);
}

/** A TRUST_PROXY list entry: a keyword, or an address with an optional prefix length. */
export function isTrustedProxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
