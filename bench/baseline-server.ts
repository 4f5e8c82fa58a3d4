/**
 * The baseline of the benchmark: a minimal node:http + pg server, no framework and no ORM, that
 * answers GET /api/v1/test-runs/{id} and GET /api/v1/test-runs?project_id=… from the same tables,
 * with the same authentication work as the service (HS256 JWT verified with the same secret and
 * library, the user loaded and its token version and active flag checked, project membership
 * checked, 404 for non-members) and a JSON body of the same shape (the run object with all fields,
 * built by the service's own pure mapper, the environment snapshot served like the service does:
 * its revision's JSON bytes from a bounded in-process cache, one `= ANY($1)` query for misses;
 * the page envelope {items, page, page_size, has_next, total}). It is what the same work costs without the framework, validation and request plumbing. Like the service,
 * it sends the fixed statements (user, run, membership) as named prepared statements and the
 * list's dynamic ones as plain queries.
 *
 * It also answers GET /bench/constant?bytes=N with N bytes of JSON built once and kept in memory
 * (no authentication, no database, no serialisation): what this machine can do at all for a
 * response of that size, with the load driver on the same cores. See {@link constantBody}.
 *
 * Environment: PORT, HOST (default 127.0.0.1), DATABASE_URL, AUTH_SECRET, DB_POOL_SIZE (20).
 */
import { createSecretKey } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import jwt from 'jsonwebtoken';
import { Pool } from 'pg';
import { JsonPart, sendJsonParts } from '../src/common/http/json-body';
import {
  RevisionSnapshotRow,
  SnapshotCache,
  snapshotBytesOf,
} from '../src/modules/test-runs/snapshot-cache';
import { testRunJsonParts } from '../src/modules/test-runs/test-run.mapper';
import {
  REVISION_SNAPSHOTS_SQL,
  RUN_COLUMNS_RAW_SNAPSHOT,
  RUN_JOINS,
  TestRunRow,
} from '../src/modules/test-runs/test-runs.repository';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_STATUSES = ['not_started', 'in_progress', 'completed', 'archived'];
const SORTS: Record<string, string> = {
  created_at: 'r.created_at',
  name: 'lower(r.name)',
  status: 'r.status',
  build: "lower(coalesce(r.build, ''))",
  environment: "lower(coalesce(r.environment_name, ''))",
};

interface User {
  id: string;
  is_admin: boolean;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

// The secret as a KeyObject made once: jsonwebtoken otherwise re-derives a key from the string on
// every verify (about 0.4 ms: it first tries, and fails, to parse it as a PEM public key).
const secret = createSecretKey(Buffer.from(process.env.AUTH_SECRET ?? '', 'utf8'));
const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 20),
  application_name: 'tms-bench-baseline',
});

/** Like the service's res.json: large raw JSON is written in its parts, not joined first. */
function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const type = status >= 400 ? 'application/problem+json' : 'application/json; charset=utf-8';
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// Revisions' snapshots as the JSON bytes runs answer, like the service's cache (64 MiB).
const snapshotCache = new SnapshotCache(64 * 1024 * 1024);

function snapshotBytes(rows: TestRunRow[]): Promise<Buffer[]> {
  return snapshotBytesOf(rows, snapshotCache, async (ids) => {
    const { rows: found } = await pool.query<RevisionSnapshotRow>(REVISION_SNAPSHOTS_SQL, [ids]);
    return found;
  });
}

async function authenticate(req: IncomingMessage): Promise<User> {
  const header = req.headers.authorization;
  const m = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header.trim()) : null;
  if (!m) throw new HttpError(401, 'unauthorized');
  let claims: Record<string, unknown>;
  try {
    const p = jwt.verify(m[1], secret, { algorithms: ['HS256'] });
    if (typeof p !== 'object' || p === null) throw new Error('bad payload');
    claims = p as Record<string, unknown>;
  } catch {
    throw new HttpError(401, 'invalid_token');
  }
  if (typeof claims.sub !== 'string' || typeof claims.ver !== 'number')
    throw new HttpError(401, 'invalid_token');
  const { rows } = await pool.query<{
    id: string;
    is_admin: boolean;
    is_active: boolean;
    token_version: number;
  }>({
    name: 'auth.user',
    text: 'SELECT id, username, display_name, is_admin, is_active, token_version FROM users WHERE id = $1',
    values: [claims.sub],
  });
  const u = rows[0];
  if (!u) throw new HttpError(401, 'invalid_token');
  if (!u.is_active) throw new HttpError(401, 'user_disabled');
  if (u.token_version !== claims.ver) throw new HttpError(401, 'token_revoked');
  return { id: u.id, is_admin: u.is_admin };
}

async function getRun(user: User, id: string, res: ServerResponse): Promise<void> {
  if (!UUID_RE.test(id)) throw new HttpError(404, 'test_run_not_found');
  // The run and the caller's membership of its project in one round trip.
  const { rows } = await pool.query<TestRunRow & { member_role: string | null }>({
    name: 'get-run',
    text: `SELECT ${RUN_COLUMNS_RAW_SNAPSHOT}, pm.role AS member_role
       FROM test_runs r ${RUN_JOINS}
       LEFT JOIN project_members pm ON pm.project_id = r.project_id AND pm.user_id = $2
      WHERE r.id = $1`,
    values: [id, user.id],
  });
  const row = rows[0];
  if (!row || (row.member_role === null && !user.is_admin))
    throw new HttpError(404, 'test_run_not_found');
  const [snapshot] = await snapshotBytes([row]);
  sendJsonParts(res, testRunJsonParts(row, snapshot));
}

function int(q: URLSearchParams, name: string, def: number, max: number): number {
  const raw = q.get(name);
  if (raw === null) return def;
  if (!/^\d+$/.test(raw)) throw new HttpError(422, 'validation_error');
  const n = Number(raw);
  if (n < 1 || n > max) throw new HttpError(422, 'validation_error');
  return n;
}

async function listRuns(user: User, q: URLSearchParams, res: ServerResponse): Promise<void> {
  const projectId = q.get('project_id') ?? '';
  if (!UUID_RE.test(projectId)) throw new HttpError(422, 'validation_error');
  const statuses = q.getAll('status');
  if (statuses.some((s) => !RUN_STATUSES.includes(s))) throw new HttpError(422, 'validation_error');
  const sortBy = q.get('sort_by') ?? 'created_at';
  const sortOrder = q.get('sort_order') ?? 'desc';
  if (!(sortBy in SORTS) || (sortOrder !== 'asc' && sortOrder !== 'desc')) {
    throw new HttpError(422, 'validation_error');
  }
  const page = int(q, 'page', 1, Number.MAX_SAFE_INTEGER);
  const pageSize = int(q, 'page_size', 50, 200);

  const member = await pool.query<{ role: string | null }>({
    name: 'access.project',
    text: `SELECT m.role FROM projects p
       LEFT JOIN project_members m ON m.project_id = p.id AND m.user_id = $2
      WHERE p.id = $1`,
    values: [projectId, user.id],
  });
  if (!member.rows[0] || (member.rows[0].role === null && !user.is_admin)) {
    throw new HttpError(404, 'project_not_found');
  }

  const params: unknown[] = [projectId];
  const where = ['r.project_id = $1'];
  if (statuses.length) {
    params.push(statuses);
    where.push(`r.status = ANY($${params.length}::varchar[])`);
  } else {
    where.push(`r.status <> 'archived'`);
  }
  const dir = sortOrder === 'asc' ? 'ASC' : 'DESC';
  const order = `${SORTS[sortBy]} ${dir}, r.id ${dir}`;
  const filter = where.join(' AND ');
  params.push(pageSize, (page - 1) * pageSize);
  // The page as an index walk, and the total from the trigger-kept per-project status counts:
  // the same statements as the service for a list filtered by project and status.
  const { rows } = await pool.query<TestRunRow>(
    `WITH page AS (
       SELECT r.id FROM test_runs r
        WHERE ${filter} ORDER BY ${order}
        LIMIT $${params.length - 1} OFFSET $${params.length}
     )
     SELECT ${RUN_COLUMNS_RAW_SNAPSHOT} FROM page JOIN test_runs r ON r.id = page.id ${RUN_JOINS}
      ORDER BY ${order}`,
    params,
  );
  const counted = await pool.query<{ n: string | null }>(
    statuses.length
      ? `SELECT sum(n) AS n FROM project_run_counts WHERE project_id = $1 AND status = ANY($2::varchar[])`
      : `SELECT sum(n) AS n FROM project_run_counts WHERE project_id = $1 AND status <> 'archived'`,
    statuses.length ? [projectId, statuses] : [projectId],
  );
  const total = Number(counted.rows[0]?.n ?? 0);
  const snapshots = await snapshotBytes(rows);
  const parts: JsonPart[] = ['{"items":['];
  rows.forEach((row, k) => {
    if (k > 0) parts.push(',');
    parts.push(...testRunJsonParts(row, snapshots[k]));
  });
  const envelope = { page, page_size: pageSize, has_next: page * pageSize < total, total };
  parts.push(`],${JSON.stringify(envelope).slice(1)}`);
  sendJsonParts(res, parts);
}

/** The last constant body built: its size and its 64 KB Buffers (a run's snapshot is about that size). */
let constant: { bytes: number; parts: Buffer[] } | null = null;

/**
 * A JSON body of exactly `bytes` bytes, `{"items":["xxx…"]}`, in 64 KB Buffers. Built once per
 * size; every request writes the same Buffers, corked (one writev), like the list writes its parts.
 */
function constantBody(bytes: number): Buffer[] {
  if (constant?.bytes === bytes) return constant.parts;
  const whole = Buffer.from(`{"items":["${'x'.repeat(bytes - 14)}"]}`, 'utf8');
  const parts: Buffer[] = [];
  for (let at = 0; at < whole.length; at += 64 * 1024)
    parts.push(whole.subarray(at, at + 64 * 1024));
  constant = { bytes, parts };
  return parts;
}

function sendConstant(q: URLSearchParams, res: ServerResponse): void {
  const bytes = Number(q.get('bytes'));
  if (!Number.isSafeInteger(bytes) || bytes < 14 || bytes > 64 * 1024 * 1024)
    throw new HttpError(422, 'validation_error');
  const parts = constantBody(bytes);
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': bytes,
  });
  res.cork();
  for (const p of parts) res.write(p);
  res.end(); // uncorks
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
  if (url.pathname === '/bench/constant') return sendConstant(url.searchParams, res);
  if (req.method !== 'GET') throw new HttpError(405, 'method_not_allowed');
  if (url.pathname === '/api/v1/test-runs') {
    return listRuns(await authenticate(req), url.searchParams, res);
  }
  const m = /^\/api\/v1\/test-runs\/([^/]+)$/.exec(url.pathname);
  if (m) return getRun(await authenticate(req), decodeURIComponent(m[1]), res);
  throw new HttpError(404, 'route_not_found');
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    if (err instanceof HttpError) send(res, err.status, { status: err.status, code: err.code });
    else {
      process.stderr.write(
        `baseline: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      send(res, 500, { status: 500, code: 'internal_error' });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 3100), process.env.HOST ?? '127.0.0.1');

const stop = () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
