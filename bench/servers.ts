/** Child processes of the bench (the built service, the baseline server) and their memory. */
import { ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Server {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
  /** Last lines the process wrote (for error reports). */
  output(): string;
}

/** Starts `node <args>` and waits until GET `readyPath` answers 200 (or the process dies). */
export async function startServer(opts: {
  name: string;
  args: string[];
  env: Record<string, string | undefined>;
  port: number;
  readyPath: string;
  timeoutMs?: number;
}): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, opts.args, {
    env: opts.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) lines.push(line);
    }
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? (signal ? 128 : 1);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (exited !== null) {
      throw new Error(
        `${opts.name} exited with ${exited} during start:\n${lines.slice(-30).join('\n')}`,
      );
    }
    try {
      const res = await fetch(url + opts.readyPath);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${opts.name} did not become ready:\n${lines.slice(-30).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    name: opts.name,
    url,
    pid: child.pid ?? 0,
    output: () => lines.join('\n'),
    stop: async () => {
      if (exited !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

function statusField(pid: number, field: string): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Current resident set size in bytes (null off Linux). */
export function rssBytes(pid: number): number | null {
  return statusField(pid, 'VmRSS');
}

/**
 * Watches a process's memory during one operation: resets the kernel's peak-RSS mark (VmHWM) when
 * allowed (`echo 5 > /proc/<pid>/clear_refs`) and samples VmRSS every 25 ms as well; the peak is
 * the larger of both.
 */
export class MemoryWatch {
  private peakSampled = 0;
  private readonly startRss: number;
  private readonly hwmReset: boolean;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    let reset = false;
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      reset = true;
    } catch {
      reset = false;
    }
    this.hwmReset = reset;
    this.startRss = rssBytes(pid) ?? 0;
    this.peakSampled = this.startRss;
    this.timer = setInterval(() => {
      const rss = rssBytes(this.pid);
      if (rss !== null && rss > this.peakSampled) this.peakSampled = rss;
    }, 25);
  }

  stop(): { startRss: number; peakRss: number; peakSource: string } {
    clearInterval(this.timer);
    const last = rssBytes(this.pid);
    if (last !== null && last > this.peakSampled) this.peakSampled = last;
    const hwm = this.hwmReset ? statusField(this.pid, 'VmHWM') : null;
    if (hwm !== null && hwm >= this.peakSampled) {
      return {
        startRss: this.startRss,
        peakRss: hwm,
        peakSource: 'VmHWM (reset before the import)',
      };
    }
    return {
      startRss: this.startRss,
      peakRss: this.peakSampled,
      peakSource: 'VmRSS sampled every 25 ms',
    };
  }
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux (getconf CLK_TCK)

/** CPU time (user + system) of a process in ms, null when unreadable. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Summed CPU time in ms of the children of `ppid` (PostgreSQL backends of a postmaster). */
export function childrenCpuMs(ppid: number): Map<number, number> {
  const out = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== ppid) continue;
      out.set(
        Number(e),
        ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND,
      );
    } catch {
      // process ended meanwhile
    }
  }
  return out;
}

/** Busy CPU time of the whole machine in ms (all cores), from /proc/stat. */
export function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …
    const busy = v[0] + v[1] + v[2] + (v[5] ?? 0) + (v[6] ?? 0) + (v[7] ?? 0);
    return (busy * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export interface CpuUse {
  serverMs: number | null;
  dbMs: number | null;
  /** CPU of everything else on the machine (other engineers' work), in cores on average. */
  otherCores: number | null;
}

/**
 * CPU used between construction and stop() by a server process, by the database backends, and by
 * everything else on the machine (busy time minus server, database and this bench process).
 */
export class CpuWatch {
  private readonly server0: number | null;
  private readonly db0: Map<number, number>;
  private readonly machine0: number | null;
  private readonly self0 = process.cpuUsage();
  private readonly t0 = performance.now();

  constructor(
    private readonly serverPid: number,
    private readonly postmasterPid: number | null,
  ) {
    this.server0 = cpuMs(serverPid);
    this.db0 = postmasterPid ? childrenCpuMs(postmasterPid) : new Map<number, number>();
    this.machine0 = machineBusyMs();
  }

  stop(): CpuUse {
    const s1 = cpuMs(this.serverPid);
    const m1 = machineBusyMs();
    const self = process.cpuUsage(this.self0);
    const wall = performance.now() - this.t0;
    let dbMs: number | null = null;
    if (this.postmasterPid) {
      dbMs = 0;
      for (const [pid, ms] of childrenCpuMs(this.postmasterPid))
        dbMs += ms - (this.db0.get(pid) ?? 0);
    }
    const serverMs = s1 !== null && this.server0 !== null ? s1 - this.server0 : null;
    let otherCores: number | null = null;
    if (m1 !== null && this.machine0 !== null && wall > 0) {
      const ours = (serverMs ?? 0) + (dbMs ?? 0) + (self.user + self.system) / 1000;
      otherCores = Math.max(0, (m1 - this.machine0 - ours) / wall);
    }
    return { serverMs, dbMs, otherCores };
  }
}

/**
 * Waits until the server and the database are idle (less than 10 % of a core each over 300 ms,
 * twice in a row), at most `maxMs`: requests abandoned by the load generator still run for a while.
 */
export async function waitIdle(
  serverPid: number,
  postmasterPid: number | null,
  maxMs = 120_000,
): Promise<void> {
  const dbTotal = () => {
    if (!postmasterPid) return 0;
    let sum = 0;
    for (const ms of childrenCpuMs(postmasterPid).values()) sum += ms;
    return sum;
  };
  const deadline = Date.now() + maxMs;
  let quiet = 0;
  let s0 = cpuMs(serverPid) ?? 0;
  let d0 = dbTotal();
  while (Date.now() < deadline && quiet < 2) {
    await new Promise((r) => setTimeout(r, 300));
    const s1 = cpuMs(serverPid) ?? 0;
    const d1 = dbTotal();
    quiet = s1 - s0 < 30 && d1 - d0 < 30 ? quiet + 1 : 0;
    s0 = s1;
    d0 = d1;
  }
}

/**
 * The node options of `npm start` (e.g. `--max-old-space-size=1024`): the bench runs the built
 * service exactly as production does, and the Dockerfile's CMD carries the same options (a unit
 * test checks that they agree).
 */
export function productionNodeArgs(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (pkg.scripts.start ?? '').trim().split(/\s+/);
  if (words[0] !== 'node')
    throw new Error(`package.json "start" does not run node: ${pkg.scripts.start}`);
  return words.slice(1).filter((w) => w.startsWith('--'));
}
