/**
 * Benchmark settings, all from environment variables (see bench/README.md).
 *
 * BENCH_SCALE=full (default) seeds the sizes of the issue; BENCH_SCALE=small seeds about 1/50 of
 * them and runs 3 s scenarios, for development on a shared machine.
 */

export interface Sizes {
  /** Users besides the bench user (members of the main project). */
  users: number;
  /** Runs in the main project (the "100,000 runs" project). */
  mainRuns: number;
  /** Run items per run (main and small project). */
  itemsPerRun: number;
  /** Runs in the small project of the scale check. */
  smallRuns: number;
  testCases: number;
  suites: number;
  milestones: number;
  environments: number;
  /** Environments of the small project (same topology). */
  smallEnvironments: number;
  revisionsPerEnvironment: number;
  /** Nodes of every environment topology (10 topology components × nodes / 10). */
  topologyNodes: number;
  components: number;
  dependencyEdges: number;
  products: number;
  /** The separate project of the cycle-detection scenario. */
  graphComponents: number;
  graphEdges: number;
  /** Testcases of the two JUnit imports. */
  junitSmall: number;
  junitLarge: number;
  /** Items of each of the two runs of the `compare-runs` scenario (main project). */
  compareItems: number;
}

export const FULL_SIZES: Sizes = {
  users: 200,
  mainRuns: 100_000,
  itemsPerRun: 10,
  smallRuns: 1_000,
  testCases: 20_000,
  suites: 200,
  milestones: 40,
  environments: 500,
  smallEnvironments: 5,
  revisionsPerEnvironment: 3,
  topologyNodes: 200,
  components: 2_000,
  dependencyEdges: 10_000,
  products: 100,
  graphComponents: 10_000,
  graphEdges: 50_000,
  junitSmall: 10_000,
  junitLarge: 100_000,
  compareItems: 10_000,
};

/** About 1/50 of the full data; topologies keep 200 nodes so request bodies stay realistic. */
export const SMALL_SIZES: Sizes = {
  users: 20,
  mainRuns: 2_000,
  itemsPerRun: 10,
  smallRuns: 20,
  testCases: 400,
  suites: 10,
  milestones: 5,
  environments: 10,
  smallEnvironments: 2,
  revisionsPerEnvironment: 3,
  topologyNodes: 200,
  components: 40,
  dependencyEdges: 200,
  products: 4,
  graphComponents: 200,
  graphEdges: 1_000,
  junitSmall: 1_000,
  junitLarge: 5_000,
  compareItems: 300,
};

export interface BenchConfig {
  scale: 'full' | 'small';
  sizes: Sizes;
  /** Measured seconds per scenario and server (in two interleaved halves when paired). */
  duration: number;
  /** Seconds of warm-up before each measured scenario. */
  warmup: number;
  /** Seconds of the one-connection measurement after each scenario. */
  soloDuration: number;
  connections: number;
  /** External database (dedicated to the bench); null → an embedded PostgreSQL in a temp dir. */
  databaseUrl: string | null;
  /** Scenario names to run (null = all). */
  only: string[] | null;
  /** Keep the temp dir (database, XML files) after the run. */
  keep: boolean;
  /** Start the service with --cpu-prof, profiles in this directory. */
  cpuProfDir: string | null;
  /** Where results.json goes. */
  resultsPath: string;
  /** True when BENCH_RESULTS named it (else it is bench/results.json, the committed figures). */
  resultsPathGiven: boolean;
  /** Connection pool size of both servers. */
  poolSize: number;
  /** Extra node arguments for the service (experiments, e.g. `--require ./patch.js`). */
  serviceNodeArgs: string[];
  /** Log statements slower than this (embedded PostgreSQL only), to `pgLogPath`. */
  pgSlowMs: number | null;
  pgLogPath: string;
  /** Record each scenario's costliest statements (pg_stat_statements; profiling, adds overhead). */
  pgStatements: boolean;
}

type Env = Record<string, string | undefined>;

function positive(env: Env, name: string, def: number): number {
  const raw = env[name]?.trim();
  if (!raw) return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

export function loadBenchConfig(env: Env, defaultResultsPath: string): BenchConfig {
  const scaleRaw = (env.BENCH_SCALE ?? 'full').trim().toLowerCase();
  if (scaleRaw !== 'full' && scaleRaw !== 'small') {
    throw new Error(`BENCH_SCALE must be "full" or "small", got "${scaleRaw}"`);
  }
  const scale = scaleRaw;
  const duration = positive(env, 'BENCH_DURATION', scale === 'full' ? 20 : 4);
  const only = env.BENCH_ONLY?.trim()
    ? env.BENCH_ONLY.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : null;
  return {
    scale,
    sizes: scale === 'full' ? FULL_SIZES : SMALL_SIZES,
    duration,
    warmup: positive(env, 'BENCH_WARMUP', Math.min(2, Math.max(1, duration / 5))),
    soloDuration: positive(env, 'BENCH_SOLO_DURATION', Math.min(4, Math.max(2, duration / 3))),
    connections: Math.round(positive(env, 'BENCH_CONNECTIONS', 32)),
    databaseUrl: env.BENCH_DATABASE_URL?.trim() || null,
    only,
    keep: env.BENCH_KEEP === '1' || env.BENCH_KEEP === 'true',
    cpuProfDir: env.BENCH_CPU_PROF?.trim() || null,
    resultsPath: env.BENCH_RESULTS?.trim() || defaultResultsPath,
    resultsPathGiven: Boolean(env.BENCH_RESULTS?.trim()),
    poolSize: Math.round(positive(env, 'DB_POOL_SIZE', 20)),
    serviceNodeArgs: (env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    pgSlowMs: env.BENCH_PG_SLOW_MS?.trim() ? positive(env, 'BENCH_PG_SLOW_MS', 100) : null,
    pgLogPath: env.BENCH_PG_LOG?.trim() || '/tmp/tms-bench-postgres.log',
    pgStatements: env.BENCH_PG_STATEMENTS === '1' || env.BENCH_PG_STATEMENTS === 'true',
  };
}

/**
 * Where a run's results go, or null for nowhere: the file BENCH_RESULTS names, else
 * bench/results.json only when the run measured something (`measured`: its scenarios and imports).
 * A run that only seeded, or held the servers for a look (`BENCH_ONLY=none`, `BENCH_HOLD=1`), would
 * otherwise replace the committed figures with a run of none.
 */
export function resultsTarget(
  cfg: Pick<BenchConfig, 'resultsPath' | 'resultsPathGiven'>,
  measured: number,
): string | null {
  return cfg.resultsPathGiven || measured > 0 ? cfg.resultsPath : null;
}
