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

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function pick<T>(list: readonly T[]): T {
  return list[Math.floor(Math.random() * list.length)];
}
