/** One load scenario: autocannon for a fixed time at a fixed number of connections. */
import autocannon from 'autocannon';
import http from 'node:http';

export interface RequestShape {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: string;
  /** Extra request headers (e.g. `If-None-Match`). */
  headers?: Record<string, string>;
}

export interface LoadScenario {
  name: string;
  /** Builds each request (ids picked at random, bodies varied). */
  next: () => RequestShape;
  /** Statuses that count as success (others are reported as errors). */
  expect: number[];
}

export interface LoadResult {
  /** Completed requests per second over the measured window. */
  rps: number;
  latencyMs: { avg: number; p50: number; p90: number; p99: number; max: number };
  requests: number;
  /** Connection errors and timeouts plus responses with an unexpected status. */
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  duration: number;
  connections: number;
  /** CPU time per completed request of the server process and of the database backends. */
  cpuMsPerRequest: { server: number | null; db: number | null };
  /** Average CPU cores used by other processes on the machine during the window. */
  otherCores: number | null;
}

export interface CpuMeter {
  stop(): { serverMs: number | null; dbMs: number | null; otherCores: number | null };
}

interface Slice {
  latencies: number[];
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  seconds: number;
  serverMs: number | null;
  dbMs: number | null;
  otherCoreSeconds: number | null;
}

/** One autocannon run; with `collect`, every response time is kept (for exact merged percentiles). */
async function once(
  baseUrl: string,
  token: string,
  s: LoadScenario,
  duration: number,
  connections: number,
  collect?: (status: number, ms: number) => void,
): Promise<autocannon.Result> {
  const instance = autocannon({
    url: baseUrl,
    connections,
    duration,
    timeout: 30,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const r = s.next();
          req.method = r.method;
          req.path = r.path;
          req.body = r.body ?? '';
          if (r.headers) req.headers = { ...req.headers, ...r.headers };
          return req;
        },
      },
    ],
  });
  if (collect) {
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      collect(status, ms);
    });
  }
  return Promise.resolve(instance);
}

export interface LoadTarget {
  url: string;
  /** CPU accounting for this target's server. */
  meter?: () => CpuMeter;
}

/**
 * Measures `targets` side by side: each gets `slices` windows of `duration / slices` seconds, in
 * the order A B B A A B … so that a change of the machine's background load hits both alike.
 * Before every window: `idle()` (requests abandoned by the previous window finish), then `warmup`
 * seconds of load on that target (its queue fills up; not counted).
 */
export async function runInterleaved(
  targets: LoadTarget[],
  token: string,
  s: LoadScenario,
  opts: { duration: number; warmup: number; connections: number; slices: number },
  idle: () => Promise<void>,
): Promise<LoadResult[]> {
  const slices: Slice[][] = targets.map(() => []);
  const order: number[] = [];
  for (let k = 0; k < opts.slices; k++) {
    const turn = targets.map((_, i) => i);
    order.push(...(k % 2 === 0 ? turn : turn.reverse()));
  }
  const sliceSeconds = opts.duration / opts.slices;
  for (const t of order) {
    const target = targets[t];
    await idle();
    // One continuous run: the first `warmup` seconds fill the queue and are not counted; the
    // responses that complete in the remaining `sliceSeconds` are.
    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    const start = performance.now();
    const measureFrom = start + opts.warmup * 1000;
    let m: CpuMeter | undefined;
    const timer = setTimeout(() => {
      m = target.meter?.();
    }, opts.warmup * 1000);
    const r = await once(
      target.url,
      token,
      s,
      opts.warmup + sliceSeconds,
      opts.connections,
      (status, ms) => {
        if (performance.now() < measureFrom) return;
        latencies.push(ms);
        statuses[status] = (statuses[status] ?? 0) + 1;
      },
    );
    clearTimeout(timer);
    const seconds = Math.max(0.001, (performance.now() - Math.max(measureFrom, start)) / 1000);
    const cpu = m?.stop() ?? { serverMs: null, dbMs: null, otherCores: null };
    slices[t].push({
      latencies,
      statuses,
      errors: r.errors,
      timeouts: r.timeouts,
      seconds,
      serverMs: cpu.serverMs,
      dbMs: cpu.dbMs,
      otherCoreSeconds: cpu.otherCores === null ? null : cpu.otherCores * seconds,
    });
  }
  await idle();
  return slices.map((list) => summarize(list, s.expect, opts.connections));
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0, 1);
}

function summarize(list: Slice[], expect: number[], connections: number): LoadResult {
  const statuses: Record<string, number> = {};
  let seconds = 0;
  let errors = 0;
  let timeouts = 0;
  let serverMs: number | null = 0;
  let dbMs: number | null = 0;
  let other: number | null = 0;
  const latencies: number[] = [];
  for (const sl of list) {
    for (const [code, n] of Object.entries(sl.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    seconds += sl.seconds;
    errors += sl.errors;
    timeouts += sl.timeouts;
    serverMs = serverMs === null || sl.serverMs === null ? null : serverMs + sl.serverMs;
    dbMs = dbMs === null || sl.dbMs === null ? null : dbMs + sl.dbMs;
    other = other === null || sl.otherCoreSeconds === null ? null : other + sl.otherCoreSeconds;
    for (const l of sl.latencies) latencies.push(l); // not push(...): hundreds of thousands
  }
  let completed = 0;
  let unexpected = 0;
  for (const [code, n] of Object.entries(statuses)) {
    completed += n;
    if (!expect.includes(Number(code))) unexpected += n;
  }
  const sorted = latencies.sort((a, b) => a - b);
  return {
    rps: round(completed / Math.max(seconds, 0.001), 1),
    latencyMs: {
      avg: round(sorted.reduce((a, b) => a + b, 0) / Math.max(sorted.length, 1), 2),
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p99: percentile(sorted, 0.99),
      max: round(sorted[sorted.length - 1] ?? 0, 1),
    },
    requests: completed,
    errors: errors + unexpected,
    timeouts,
    statuses,
    duration: round(seconds, 2),
    connections,
    cpuMsPerRequest: {
      server: serverMs !== null && completed ? round(serverMs / completed, 3) : null,
      db: dbMs !== null && completed ? round(dbMs / completed, 3) : null,
    },
    otherCores: other === null ? null : round(other / Math.max(seconds, 0.001), 2),
  };
}

/**
 * One request with exactly the headers autocannon sends in the loaded run: `fetch` would add
 * `Accept-Encoding: gzip, deflate`, and the service then gzips a 3 MB list page (about 15 ms of
 * CPU) that the loaded run, and the baseline always, send as they are.
 */
function send(agent: http.Agent, baseUrl: string, token: string, r: RequestShape): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = r.body === undefined ? undefined : Buffer.from(r.body, 'utf8');
    const req = http.request(
      baseUrl + r.path,
      {
        method: r.method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(body ? { 'content-length': body.length } : {}),
          ...r.headers,
        },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * One connection, requests one after another: the service time of a request without queueing.
 * Runs for `seconds` but at least `minRequests` and at most `maxRequests` requests.
 */
export async function runSolo(
  baseUrl: string,
  token: string,
  s: LoadScenario,
  opts: { seconds: number; minRequests: number; maxRequests: number },
  meter?: () => CpuMeter,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let unexpected = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const m = meter?.();
  const t0 = performance.now();
  while (
    latencies.length < opts.maxRequests &&
    (latencies.length < opts.minRequests || performance.now() - t0 < opts.seconds * 1000)
  ) {
    const r = s.next();
    const start = performance.now();
    const status = await send(agent, baseUrl, token, r);
    latencies.push(performance.now() - start);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (!s.expect.includes(status)) unexpected++;
  }
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  const cpu = m?.stop() ?? { serverMs: null, dbMs: null, otherCores: null };
  const sorted = [...latencies].sort((a, b) => a - b);
  const q = (p: number) =>
    round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0, 1);
  const n = latencies.length;
  return {
    rps: round(n / seconds, 1),
    latencyMs: {
      avg: round(latencies.reduce((a, b) => a + b, 0) / Math.max(n, 1), 2),
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      max: round(sorted[n - 1] ?? 0, 1),
    },
    requests: n,
    errors: unexpected,
    timeouts: 0,
    statuses,
    duration: round(seconds, 2),
    connections: 1,
    cpuMsPerRequest: {
      server: cpu.serverMs !== null && n ? round(cpu.serverMs / n, 3) : null,
      db: cpu.dbMs !== null && n ? round(cpu.dbMs / n, 3) : null,
    },
    otherCores: cpu.otherCores === null ? null : round(cpu.otherCores, 2),
  };
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function pick<T>(list: readonly T[]): T {
  return list[Math.floor(Math.random() * list.length)];
}
