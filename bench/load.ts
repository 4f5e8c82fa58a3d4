/** One load scenario: autocannon for a fixed time at a fixed number of connections. */
import autocannon from 'autocannon';

export interface RequestShape {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: string;
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

function once(
  baseUrl: string,
  token: string,
  s: LoadScenario,
  duration: number,
  connections: number,
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
          return req;
        },
      },
    ],
  });
  return Promise.resolve(instance);
}

export async function runLoad(
  baseUrl: string,
  token: string,
  s: LoadScenario,
  opts: { duration: number; warmup: number; connections: number },
  meter?: () => CpuMeter,
): Promise<LoadResult> {
  if (opts.warmup > 0) await once(baseUrl, token, s, opts.warmup, opts.connections);
  const m = meter?.();
  const r = await once(baseUrl, token, s, opts.duration, opts.connections);
  const cpu = m?.stop() ?? { serverMs: null, dbMs: null, otherCores: null };

  const statuses: Record<string, number> = {};
  let unexpected = 0;
  let completed = 0;
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) {
    const count = Number(stat.count);
    statuses[code] = count;
    completed += count;
    if (!s.expect.includes(Number(code))) unexpected += count;
  }
  const seconds = r.duration > 0 ? r.duration : opts.duration;
  return {
    rps: round(completed / seconds, 1),
    latencyMs: {
      avg: round(r.latency.average, 2),
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      max: r.latency.max,
    },
    requests: completed,
    errors: r.errors + unexpected,
    timeouts: r.timeouts,
    statuses,
    duration: round(seconds, 2),
    connections: opts.connections,
    cpuMsPerRequest: {
      server: cpu.serverMs !== null && completed ? round(cpu.serverMs / completed, 3) : null,
      db: cpu.dbMs !== null && completed ? round(cpu.dbMs / completed, 3) : null,
    },
    otherCores: cpu.otherCores === null ? null : round(cpu.otherCores, 2),
  };
}

async function send(baseUrl: string, token: string, r: RequestShape): Promise<number> {
  const res = await fetch(baseUrl + r.path, {
    method: r.method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: r.body,
  });
  await res.arrayBuffer();
  return res.status;
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
  const m = meter?.();
  const t0 = performance.now();
  while (
    latencies.length < opts.maxRequests &&
    (latencies.length < opts.minRequests || performance.now() - t0 < opts.seconds * 1000)
  ) {
    const r = s.next();
    const start = performance.now();
    const status = await send(baseUrl, token, r);
    latencies.push(performance.now() - start);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (!s.expect.includes(status)) unexpected++;
  }
  const seconds = (performance.now() - t0) / 1000;
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
