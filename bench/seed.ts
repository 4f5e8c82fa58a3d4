/**
 * Builds the benchmark data set directly in PostgreSQL with set-based SQL (generate_series,
 * unnest): users and memberships, a main project (runs, run items, test cases, suites, milestones,
 * environments with revisions and 200-node topologies, components with dependencies, products with
 * links and coverages), a small project for the scale check, and a graph project for the cycle
 * detection scenario. Everything that the service derives (risk, snapshot hashes, topology
 * entities and counters, run counters) is computed with the service's own pure functions or in
 * SQL from the inserted rows, so the data is what the API would have written.
 */
import { Client } from 'pg';
import { hashPassword } from '../src/common/auth/password';
import { computeRisk, RiskFactors } from '../src/modules/components/risk-score';
import { snapshotHash } from '../src/modules/environments/snapshot-hash';
import {
  buildSnapshot,
  deriveEntitiesAndEdges,
  topologyCounters,
} from '../src/modules/environments/topology';
import type { Sizes } from './config';
import { makeTopology } from './topology';

export const BENCH_USERNAME = 'bench';
export const BENCH_PASSWORD = 'bench-password-not-secret';

export interface SeedResult {
  userId: string;
  mainProjectId: string;
  smallProjectId: string;
  graphProjectId: string;
  /** A random sample of run ids of the main project (runs with an environment snapshot). */
  runIds: string[];
  /** A random sample of runs without environment (small bodies). */
  runIdsWithoutEnvironment: string[];
  milestoneIds: string[];
  environmentIds: string[];
  productIds: string[];
  /** Main project components in topological index order (edges go from lower to higher index). */
  componentIds: string[];
  graphComponentIds: string[];
  /** A sample of existing edges [source, target] of the graph project. */
  graphEdges: Array<[string, string]>;
  /** The two runs of the `compare-runs` scenario: [base, run] (main project). */
  compareRunIds: [string, string];
  /** A random sample of the main project's active test cases (case history). */
  caseIds: string[];
  counts: Record<string, number>;
  timings: Record<string, number>;
  totalMs: number;
}

/** Deterministic pseudo-random numbers (mulberry32) so every run seeds the same shapes. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Tables whose non-unique secondary indexes are rebuilt after the bulk load. */
const BULK_TABLES = [
  'test_runs',
  'run_items',
  'test_cases',
  'test_case_component_coverages',
  'components',
  'component_dependencies',
  'products',
  'product_components',
  'environments',
  'environment_revisions',
  'milestones',
  'suites',
];

const UUID7_FN = `
  CREATE OR REPLACE FUNCTION pg_temp.u7(ts timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
    SELECT (lpad(to_hex(floor(extract(epoch FROM ts) * 1000)::bigint), 12, '0')
            || '7' || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid
      FROM (SELECT md5(random()::text || clock_timestamp()::text) AS h) s
  $$`;

export class Seeder {
  private readonly timings: Record<string, number> = {};
  private readonly counts: Record<string, number> = {};

  constructor(
    private readonly db: Client,
    private readonly sizes: Sizes,
    private readonly log: (msg: string) => void,
  ) {}

  private async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const out = await fn();
    const ms = performance.now() - t0;
    this.timings[name] = Math.round(ms);
    this.log(`  seeded ${name} in ${(ms / 1000).toFixed(1)} s`);
    return out;
  }

  private async q<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const res = await this.db.query(sql, params);
    return res.rows as T[];
  }

  async run(): Promise<SeedResult> {
    const t0 = performance.now();
    await this.q(UUID7_FN);
    await this.q(`SET synchronous_commit = off`);
    await this.q(`SET maintenance_work_mem = '256MB'`);
    try {
      // Bulk load without per-row foreign-key triggers (superuser only; the data is consistent).
      await this.q(`SET session_replication_role = replica`);
    } catch {
      this.log('  (not a superuser: foreign keys are checked row by row, seeding is slower)');
    }

    const stamp = new Date()
      .toISOString()
      .replace(/[-:.TZ]/g, '')
      .slice(0, 14);
    const userId = await this.step('users', () => this.seedUsers());
    // Bulk load first, index after: the non-unique secondary indexes of the big tables are dropped
    // and rebuilt from their own definitions (unique ones stay: ON CONFLICT needs them).
    const indexes = await this.step('drop_indexes', () => this.dropSecondaryIndexes(BULK_TABLES));
    try {
      return await this.load(t0, userId, stamp, indexes);
    } catch (err) {
      await this.recreateIndexes(indexes).catch(() => undefined);
      throw err;
    }
  }

  private async load(
    t0: number,
    userId: string,
    stamp: string,
    indexes: string[],
  ): Promise<SeedResult> {
    const s = this.sizes;
    const [mainProjectId, smallProjectId, graphProjectId] = await this.step(
      'projects',
      async () => [
        await this.project(`Bench main ${stamp}`, userId),
        await this.project(`Bench small ${stamp}`, userId),
        await this.project(`Bench graph ${stamp}`, userId),
      ],
    );
    await this.step('memberships', () => this.memberships(mainProjectId));

    await this.step('milestones', () => this.milestones(mainProjectId, userId, s.milestones));
    await this.step('suites', () => this.suites(mainProjectId, s.suites));
    await this.step('test_cases', () => this.testCases(mainProjectId, userId, s.testCases));
    await this.step('components', () => this.components(mainProjectId, s.components, 1));
    await this.step('component_dependencies', () =>
      this.dependencies(mainProjectId, s.components, s.dependencyEdges),
    );
    await this.step('products', () => this.products(mainProjectId, userId, s.products));
    await this.step('coverages', () => this.coverages(mainProjectId));
    await this.step('environments', () =>
      this.environments(mainProjectId, userId, s.environments, s.revisionsPerEnvironment),
    );
    await this.step('test_runs', () => this.runs(mainProjectId, s.mainRuns));
    await this.step('run_items', () => this.runItems(mainProjectId, s.itemsPerRun));
    const compareRunIds = await this.step('compare_runs', () =>
      this.compareRuns(mainProjectId, s.compareItems),
    );
    await this.step('run_counters', () => this.runCounters(mainProjectId));

    // The small project of the scale check: same shapes, fewer runs (and its own cases/environments).
    await this.step('small_project', async () => {
      await this.milestones(smallProjectId, userId, 2);
      await this.suites(smallProjectId, 2);
      await this.testCases(smallProjectId, userId, Math.max(s.itemsPerRun * 2, 50));
      await this.environments(
        smallProjectId,
        userId,
        s.smallEnvironments,
        s.revisionsPerEnvironment,
      );
      await this.runs(smallProjectId, s.smallRuns);
      await this.runItems(smallProjectId, s.itemsPerRun);
      await this.runCounters(smallProjectId);
    });

    await this.step('graph_project', async () => {
      await this.components(graphProjectId, s.graphComponents, 2);
      await this.dependencies(graphProjectId, s.graphComponents, s.graphEdges);
    });

    await this.q(`SET session_replication_role = DEFAULT`).catch(() => undefined);
    // Triggers were off during the bulk load: rebuild what they keep (the run counts per status).
    await this.step('run_counts', async () => {
      await this.q(`DELETE FROM project_run_counts`);
      await this.q(
        `INSERT INTO project_run_counts (project_id, status, n)
         SELECT project_id, status, count(*) FROM test_runs GROUP BY project_id, status`,
      );
    });
    await this.step('create_indexes', () => this.recreateIndexes(indexes));
    indexes.length = 0;
    // The unique indexes of run_items stayed during the load, which inserted a million items in
    // join order: random places in the item ids and run ids, leaving their pages about 63 % full.
    // The service adds the items of new runs with new uuidv7 ids, at the indexes' right end, which
    // B-tree fills to the fillfactor: rebuilt, they are what such a table has.
    await this.step('reindex_unique', async () => {
      await this.q(`REINDEX INDEX pk_run_items`);
      await this.q(`REINDEX INDEX uq_run_items_run_case`);
    });
    await this.step('vacuum_analyze', async () => {
      for (const t of [
        'users',
        'project_members',
        'test_runs',
        'run_items',
        'test_cases',
        'suites',
        'milestones',
        'environments',
        'environment_revisions',
        'components',
        'component_dependencies',
        'products',
        'product_components',
        'test_case_component_coverages',
        'project_counters',
      ]) {
        await this.q(`VACUUM (ANALYZE) ${t}`);
      }
      // The runs were written twice (inserted, then their counters set from the items): half of
      // test_runs was the dead first versions (35 of 69 MiB at full scale), space the service's
      // own counter updates, spread over a run's life, would have had reused. Compacted to what
      // the table holds: the live runs.
      await this.q(`VACUUM (FULL, ANALYZE) test_runs`);
      // A rewritten table has no visibility map: until a vacuum marks its pages all-visible,
      // every index-only scan of it (the run list's page walk, fix 61) reads each run from the
      // table after all. Autovacuum gives a live database that map (PostgreSQL 13+ vacuums
      // tables that only grow, too); the seeded one gets it now.
      await this.q(`VACUUM test_runs`);
    });

    await this.verify(mainProjectId);
    await this.countRows(mainProjectId, smallProjectId, graphProjectId);
    const sample = await this.sample(mainProjectId, graphProjectId);
    return {
      userId,
      mainProjectId,
      smallProjectId,
      graphProjectId,
      ...sample,
      compareRunIds,
      counts: this.counts,
      timings: this.timings,
      totalMs: Math.round(performance.now() - t0),
    };
  }

  // ---------------------------------------------------------------------------------------------

  private async dropSecondaryIndexes(tables: readonly string[]): Promise<string[]> {
    const rows = await this.q<{ name: string; def: string }>(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i
        WHERE i.indrelid = ANY($1::regclass[]) AND NOT i.indisunique AND NOT i.indisprimary
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
      [tables],
    );
    for (const r of rows) await this.q(`DROP INDEX ${r.name}`);
    return rows.map((r) => r.def);
  }

  private async recreateIndexes(defs: readonly string[]): Promise<void> {
    for (const def of defs) await this.q(def);
  }

  /** A temp table with an index on `i` (joins on an ordinal stay hash/index joins). */
  private async temp(name: string, sql: string, params: unknown[]): Promise<number> {
    await this.q(`DROP TABLE IF EXISTS ${name}`);
    await this.q(`CREATE TEMP TABLE ${name} AS ${sql}`, params);
    await this.q(`CREATE UNIQUE INDEX ON ${name} (i)`);
    await this.q(`ANALYZE ${name}`);
    const rows = await this.q<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
    return Number(rows[0].n);
  }

  private async seedUsers(): Promise<string> {
    const hash = await hashPassword(BENCH_PASSWORD);
    const rows = await this.q<{ id: string }>(
      `INSERT INTO users (id, username, display_name, email, password_hash, is_admin, is_active, token_version)
       VALUES (pg_temp.u7(now()), $1, 'Bench Runner', 'bench@example.test', $2, false, true, 0)
       ON CONFLICT ((lower(username))) DO UPDATE
         SET password_hash = EXCLUDED.password_hash, is_active = true, is_admin = false
       RETURNING id`,
      [BENCH_USERNAME, hash],
    );
    await this.q(
      `INSERT INTO users (id, username, display_name, email, password_hash, created_at, updated_at)
       SELECT pg_temp.u7(now() - g * interval '1 hour'), 'bench-user-' || g, 'Bench User ' || g,
              'bench-user-' || g || '@example.test', $1, now() - g * interval '1 hour', now()
         FROM generate_series(1, $2::int) g
       ON CONFLICT DO NOTHING`,
      [hash, this.sizes.users],
    );
    return rows[0].id;
  }

  private async project(name: string, leadId: string): Promise<string> {
    const rows = await this.q<{ id: string }>(
      `INSERT INTO projects (id, name, description) VALUES (pg_temp.u7(now()), $1, 'Benchmark data') RETURNING id`,
      [name],
    );
    await this.q(
      `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'lead')`,
      [rows[0].id, leadId],
    );
    return rows[0].id;
  }

  private async memberships(projectId: string): Promise<void> {
    await this.q(
      `INSERT INTO project_members (project_id, user_id, role)
       SELECT $1, u.id, (ARRAY['viewer', 'tester', 'tester', 'lead'])[1 + (row_number() OVER (ORDER BY u.username))::int % 4]
         FROM users u
        WHERE u.username LIKE 'bench-user-%'
       ON CONFLICT DO NOTHING`,
      [projectId],
    );
  }

  private async milestones(projectId: string, userId: string, n: number): Promise<void> {
    await this.q(
      `INSERT INTO milestones (id, project_id, name, description, status, start_date, target_date,
                               completed_at, owner_id, release_label, created_by, created_at, updated_at)
       SELECT pg_temp.u7(t.ts), $1, 'Release 2025.' || g, 'Release train ' || g,
              CASE WHEN g < $3::int - 1 THEN 'completed' ELSE 'active' END,
              t.ts::date, (t.ts + interval '30 days')::date,
              CASE WHEN g < $3::int - 1 THEN t.ts + interval '30 days' END,
              $2, '2025.' || g, $2, t.ts, t.ts
         FROM generate_series(1, $3::int) g
        CROSS JOIN LATERAL (SELECT now() - ($3::int - g + 1) * interval '20 days' AS ts) t`,
      [projectId, userId, n],
    );
  }

  private async suites(projectId: string, n: number): Promise<void> {
    // Top-level areas, each with child suites (two levels).
    const top = Math.max(1, Math.round(Math.sqrt(n)));
    await this.q(
      `INSERT INTO suites (id, project_id, parent_id, name, description, position, created_at, updated_at)
       SELECT pg_temp.u7(now() - interval '900 days'), $1, NULL, 'Area ' || g, NULL, g * 100,
              now() - interval '900 days', now() - interval '900 days'
         FROM generate_series(1, $2::int) g`,
      [projectId, top],
    );
    await this.q(
      `INSERT INTO suites (id, project_id, parent_id, name, description, position, created_at, updated_at)
       SELECT pg_temp.u7(now() - interval '899 days'), $1, p.id, p.name || ' / Feature ' || g, NULL, g * 100,
              now() - interval '899 days', now() - interval '899 days'
         FROM (SELECT id, name, row_number() OVER (ORDER BY position) AS k FROM suites WHERE project_id = $1) p
         JOIN generate_series(1, $2::int) g ON (g % $3) + 1 = p.k`,
      [projectId, Math.max(0, n - top), top],
    );
  }

  private async testCases(projectId: string, userId: string, n: number): Promise<void> {
    await this.q(
      `WITH s AS (SELECT array_agg(id ORDER BY created_at, id) AS ids FROM suites WHERE project_id = $1),
            u AS (SELECT array_agg(id ORDER BY username) AS ids FROM users WHERE username LIKE 'bench-user-%')
       INSERT INTO test_cases (id, project_id, key, key_number, title, description, preconditions, steps,
                               priority, status, test_case_type, automation_id, suite_id, owner_id, tags,
                               created_by, created_at, updated_at)
       SELECT pg_temp.u7(t.ts), $1, 'TC-' || g, g,
              (ARRAY['Checkout', 'Login', 'Search', 'Payment', 'Profile', 'Cart', 'Shipping', 'Refund'])[1 + g % 8]
                || ' ' || (ARRAY['accepts valid input', 'rejects an expired card', 'retries on timeout',
                                 'shows an error', 'keeps the session', 'handles unicode'])[1 + (g / 8) % 6]
                || ' (variant ' || g || ')',
              'Verifies behaviour ' || g || ' of the checkout flow.', 'A signed-in customer',
              '[{"action": "Open the page", "expected": "The page loads"}, {"action": "Submit the form", "expected": "The result is saved"}]'::jsonb,
              (ARRAY['low', 'medium', 'high', 'critical'])[1 + g % 4],
              CASE WHEN g % 50 = 0 THEN 'draft' ELSE 'active' END,
              CASE WHEN g % 3 = 0 THEN 'manual' ELSE 'automated' END,
              CASE WHEN g % 3 = 0 THEN NULL ELSE 'com.bench.module' || (g % 40) || '.Case' || (g % 400) || 'Test.test_' || g END,
              s.ids[1 + g % greatest(cardinality(s.ids), 1)],
              u.ids[1 + g % greatest(cardinality(u.ids), 1)],
              ARRAY['bench', 'area-' || (g % 20)],
              $2, t.ts, t.ts + interval '3 days'
         FROM generate_series(1, $3::int) g
        CROSS JOIN s CROSS JOIN u
        CROSS JOIN LATERAL (SELECT now() - interval '900 days' + g * (interval '850 days' / $3::int) AS ts) t`,
      [projectId, userId, n],
    );
    await this.q(
      `INSERT INTO project_counters (project_id, name, value) VALUES ($1, 'test_case_key', $2)
       ON CONFLICT (project_id, name) DO UPDATE SET value = EXCLUDED.value`,
      [projectId, n],
    );
  }

  private async components(projectId: string, n: number, seed: number): Promise<void> {
    const rand = rng(seed);
    const cols: Record<keyof RiskFactors | 'score' | 'level', Array<number | string>> = {
      business_criticality: [],
      change_frequency: [],
      integration_complexity: [],
      defect_density: [],
      production_incident_score: [],
      automation_confidence: [],
      score: [],
      level: [],
    };
    for (let i = 0; i < n; i++) {
      const f: RiskFactors = {
        business_criticality: Math.floor(rand() * 6),
        change_frequency: Math.floor(rand() * 6),
        integration_complexity: Math.floor(rand() * 6),
        defect_density: Math.floor(rand() * 6),
        production_incident_score: Math.floor(rand() * 6),
        automation_confidence: Math.floor(rand() * 6),
      };
      const risk = computeRisk(f);
      for (const k of Object.keys(f) as Array<keyof RiskFactors>) cols[k].push(f[k]);
      cols.score.push(risk.risk_score);
      cols.level.push(risk.risk_level);
    }
    await this.q(
      `WITH u AS (SELECT array_agg(id ORDER BY username) AS ids FROM users WHERE username LIKE 'bench-user-%')
       INSERT INTO components (id, project_id, name, key, description, owner_id, status, tags,
                               business_criticality, change_frequency, integration_complexity,
                               defect_density, production_incident_score, automation_confidence,
                               risk_score, risk_level, created_at, updated_at)
       SELECT pg_temp.u7(now() - interval '800 days' + f.i * interval '1 minute'), $1,
              'Component ' || lpad(f.i::text, 5, '0'), 'cmp-' || lpad(f.i::text, 5, '0'),
              'Functional area ' || f.i, u.ids[1 + f.i % greatest(cardinality(u.ids), 1)],
              CASE WHEN f.i % 97 = 96 THEN 'archived' ELSE 'active' END,
              ARRAY['bench', 'layer-' || (f.i % 5)],
              f.bc, f.cf, f.ic, f.dd, f.pis, f.ac, f.score, f.level,
              now() - interval '800 days' + f.i * interval '1 minute', now() - interval '10 days'
         FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[], $8::int[], $9::text[])
              WITH ORDINALITY AS f(bc, cf, ic, dd, pis, ac, score, level, i)
        CROSS JOIN u`,
      [
        projectId,
        cols.business_criticality,
        cols.change_frequency,
        cols.integration_complexity,
        cols.defect_density,
        cols.production_incident_score,
        cols.automation_confidence,
        cols.score,
        cols.level,
      ],
    );
  }

  /**
   * A random DAG: every edge goes from a component to one with a higher index (by key), within a
   * window of 200, so paths are long and a replacement's cycle check has to walk most of the graph.
   */
  private async dependencies(projectId: string, components: number, edges: number): Promise<void> {
    const perSource = Math.ceil(edges / Math.max(1, components)) + 1;
    const n = await this.temp(
      'bench_comp',
      `SELECT id, (row_number() OVER (ORDER BY key))::int - 1 AS i FROM components WHERE project_id = $1`,
      [projectId],
    );
    await this.q(
      `WITH cand AS (
         SELECT DISTINCT s.id AS source, s.i + 1 + floor(random() * least(200, $2::int - s.i - 1))::int AS ti
           FROM bench_comp s CROSS JOIN generate_series(1, $3::int) k
          WHERE s.i < $2::int - 1
       ),
       picked AS (SELECT source, ti FROM cand ORDER BY random() LIMIT $4::int)
       INSERT INTO component_dependencies (id, source_component_id, target_component_id, project_id,
                                           dependency_type, created_at)
       SELECT pg_temp.u7(now() - interval '30 days'), p.source, t.id, $1, 'depends_on', now() - interval '30 days'
         FROM picked p JOIN bench_comp t ON t.i = p.ti
       ON CONFLICT DO NOTHING`,
      [projectId, n, perSource, edges],
    );
  }

  private async products(projectId: string, userId: string, n: number): Promise<void> {
    await this.q(
      `INSERT INTO products (id, project_id, name, key, description, owner_id, status, tags, created_at, updated_at)
       SELECT pg_temp.u7(now() - interval '700 days' + g * interval '1 hour'), $1,
              'Product ' || lpad(g::text, 3, '0'), 'prd-' || lpad(g::text, 3, '0'),
              'Product line ' || g, $2, 'active', ARRAY['bench', 'line-' || (g % 7)],
              now() - interval '700 days' + g * interval '1 hour', now() - interval '5 days'
         FROM generate_series(1, $3::int) g`,
      [projectId, userId, n],
    );
    // Every component belongs to one product (round robin); the first three of each are core.
    const products = await this.temp(
      'bench_prod',
      `SELECT id, (row_number() OVER (ORDER BY key))::int - 1 AS i FROM products WHERE project_id = $1`,
      [projectId],
    );
    await this.temp(
      'bench_comp',
      `SELECT id, (row_number() OVER (ORDER BY key))::int - 1 AS i FROM components WHERE project_id = $1`,
      [projectId],
    );
    await this.q(
      `INSERT INTO product_components (product_id, component_id, project_id, is_core, sort_order, created_at)
       SELECT p.id, c.id, $1, c.i / $2::int < 3, c.i / $2::int, now() - interval '100 days'
         FROM bench_comp c JOIN bench_prod p ON p.i = c.i % $2::int`,
      [projectId, products],
    );
  }

  /**
   * Each active case covers one or two components; every tenth component stays uncovered. One
   * coverage in ten is mandatory for release (by a hash, so most components of every product have
   * one: readiness then reads latest results; `key_number % 10` put them all in 16 products).
   */
  private async coverages(projectId: string): Promise<void> {
    const n = await this.temp(
      'bench_comp',
      `SELECT id, (row_number() OVER (ORDER BY key))::int - 1 AS i FROM components WHERE project_id = $1`,
      [projectId],
    );
    await this.q(
      `WITH tc AS (SELECT id, key_number AS g FROM test_cases WHERE project_id = $1),
            pairs AS (
              SELECT tc.id AS case_id, tc.g, (tc.g * 7) % $2::int AS ci FROM tc
              UNION ALL
              SELECT tc.id, tc.g, (tc.g * 13 + 1) % $2::int FROM tc WHERE tc.g % 3 = 0
            )
       INSERT INTO test_case_component_coverages (id, project_id, test_case_id, component_id, coverage_type,
                                                  coverage_strength, is_mandatory_for_release, created_at, updated_at)
       SELECT pg_temp.u7(now() - interval '50 days'), $1, p.case_id, c.id,
              (ARRAY['direct', 'indirect', 'integration', 'e2e'])[1 + p.g % 4],
              (ARRAY['smoke', 'regression', 'regression', 'deep'])[1 + (p.g / 4) % 4],
              -- One coverage in ten is mandatory for release, by a hash of the pair: spread over
              -- every component (release readiness evaluates the latest results of most products).
              abs(hashint8(p.g::bigint * 2003 + p.ci)) % 10 = 0,
              now() - interval '50 days', now() - interval '50 days'
         FROM pairs p JOIN bench_comp c ON c.i = CASE WHEN p.ci % 10 = 9 THEN p.ci - 1 ELSE p.ci END
       ON CONFLICT DO NOTHING`,
      [projectId, n],
    );
  }

  /**
   * Environments with `revisions` revisions each; revision r's topology differs in its metadata.
   * Snapshots, hashes, derived entities/edges and counters come from the service's pure functions.
   */
  private async environments(
    projectId: string,
    userId: string,
    n: number,
    revisions: number,
  ): Promise<void> {
    const nodes = this.sizes.topologyNodes;
    const sections: string[] = [];
    const hashes: string[] = [];
    const topologies: string[] = [];
    const entities: string[] = [];
    const edges: string[] = [];
    let counters: ReturnType<typeof topologyCounters> | null = null;
    for (let r = 1; r <= revisions; r++) {
      const snap = buildSnapshot({
        project_id: projectId,
        name: 'x',
        topology: makeTopology(nodes, r),
      });
      const graph = deriveEntitiesAndEdges(snap);
      topologies.push(JSON.stringify(snap.topology));
      entities.push(JSON.stringify(graph.entities));
      edges.push(JSON.stringify(graph.edges));
      counters ??= topologyCounters(snap.topology, graph);
    }
    for (let e = 1; e <= n; e++) {
      for (let r = 1; r <= revisions; r++) {
        const snap = buildSnapshot({
          project_id: projectId,
          name: `perf-env-${String(e).padStart(3, '0')}`,
          kind: 'performance',
          status: 'active',
          description: `Performance environment ${e}`,
          tags: ['bench', `region-${e % 4}`],
          use_cases: ['load', e % 2 ? 'soak' : 'stress'],
          topology: makeTopology(nodes, r),
          meta: { owner: 'perf-team', cost_center: `cc-${e % 10}` },
          extra: {},
        });
        if (r === 1) sections.push(JSON.stringify(snap.environment));
        hashes.push(snapshotHash(snap));
      }
    }
    const c = counters as NonNullable<typeof counters>;
    await this.q('BEGIN');
    await this.q(
      `CREATE TEMP TABLE IF NOT EXISTS bench_env (e int, id uuid, sec jsonb, ts timestamptz) ON COMMIT DROP`,
    );
    await this.q(
      `INSERT INTO bench_env (e, id, sec, ts)
       SELECT s.e, pg_temp.u7(t.ts), s.sec, t.ts
         FROM unnest($1::jsonb[]) WITH ORDINALITY AS s(sec, e)
        CROSS JOIN LATERAL (SELECT now() - interval '600 days' + s.e * interval '1 hour' AS ts) t`,
      [sections],
    );
    await this.q(
      `INSERT INTO environments (id, project_id, name, kind, status, description, tags, use_cases, schema_version,
                                 topology, meta, extra, current_revision_id, current_revision_number, snapshot_hash,
                                 entities_count, edges_count, topology_component_count, topology_node_count,
                                 topology_endpoint_count, infra_host_types, infra_providers, infra_regions,
                                 created_by, updated_by, created_at, updated_at)
       SELECT b.id, $1, b.sec->>'name', b.sec->>'kind', b.sec->>'status', b.sec->>'description',
              ARRAY(SELECT jsonb_array_elements_text(b.sec->'tags')),
              ARRAY(SELECT jsonb_array_elements_text(b.sec->'use_cases')),
              1, ($2::jsonb[])[$3], b.sec->'meta', b.sec->'extra',
              gen_random_uuid(), $3, ($4::text[])[(b.e - 1) * $3 + $3],
              $5, $6, $7, $8, $9, $10, $11, $12, $13, $13,
              b.ts, b.ts + $3 * interval '1 day'
         FROM bench_env b`,
      [
        projectId,
        topologies,
        revisions,
        hashes,
        c.entities_count,
        c.edges_count,
        c.topology_component_count,
        c.topology_node_count,
        c.topology_endpoint_count,
        c.infra_host_types,
        c.infra_providers,
        c.infra_regions,
        userId,
      ],
    );
    await this.q(
      `INSERT INTO environment_revisions (id, environment_id, project_id, revision_number, schema_version,
                                          is_current, revision_note, full_snapshot, snapshot_hash, entities,
                                          edges, entities_count, edges_count, created_by, created_at)
       SELECT pg_temp.u7(b.ts + r * interval '1 day'), b.id, $1::uuid, r, 1, r = $3,
              CASE WHEN r = 1 THEN 'Initial revision' ELSE 'Changed: topology' END,
              jsonb_build_object('environment', b.sec, 'topology', ($2::jsonb[])[r], 'project_id', $1::uuid::text),
              ($4::text[])[(b.e - 1) * $3 + r], ($5::jsonb[])[r], ($6::jsonb[])[r], $7, $8, $9,
              b.ts + r * interval '1 day'
         FROM bench_env b CROSS JOIN generate_series(1, $3::int) r`,
      [
        projectId,
        topologies,
        revisions,
        hashes,
        entities,
        edges,
        c.entities_count,
        c.edges_count,
        userId,
      ],
    );
    await this.q(
      `UPDATE environments e SET current_revision_id = r.id
         FROM environment_revisions r
        WHERE r.environment_id = e.id AND r.is_current AND e.project_id = $1`,
      [projectId],
    );
    await this.q('COMMIT');
  }

  /**
   * Runs spread over two years, newest last: most completed, every tenth old one archived, the
   * newest in progress or not started. Nine in ten captured a revision of an environment of the
   * project (CI uploads have none).
   */
  private async runs(projectId: string, n: number): Promise<void> {
    const revisions = await this.temp(
      'bench_rev',
      `SELECT r.id, r.environment_id, e.name, r.revision_number, r.snapshot_hash,
              (row_number() OVER (ORDER BY e.created_at, r.revision_number))::int - 1 AS i
         FROM environment_revisions r JOIN environments e ON e.id = r.environment_id
        WHERE r.project_id = $1`,
      [projectId],
    );
    await this.q(
      `WITH ms AS (SELECT array_agg(id ORDER BY created_at) AS ids FROM milestones WHERE project_id = $1),
       us AS (SELECT array_agg(user_id ORDER BY user_id) AS ids FROM project_members WHERE project_id = $1 AND role <> 'viewer'),
       g AS (
         SELECT g, now() - interval '730 days' + g * (interval '729 days' / $2::int) AS ts,
                CASE WHEN g > $2::int - greatest($2::int / 100, 1) THEN (CASE WHEN g % 4 = 0 THEN 'not_started' ELSE 'in_progress' END)
                     WHEN g % 10 = 0 THEN 'archived' ELSE 'completed' END AS status,
                g % 10 <> 3 AS with_env
           FROM generate_series(1, $2::int) g
       )
       INSERT INTO test_runs (id, project_id, name, description, environment_id, environment_name,
                              environment_revision_id, environment_revision_number, environment_snapshot_hash,
                              environment_snapshot, milestone_id, build, assignee_id, created_by, status,
                              started_at, completed_at, archived_at, created_at, updated_at)
       SELECT pg_temp.u7(g.ts), $1,
              (ARRAY['Nightly regression', 'Smoke', 'Release candidate', 'Performance baseline',
                     'Hotfix verification', 'Exploratory session'])[1 + g.g % 6] || ' #' || g.g,
              CASE WHEN g.g % 5 = 0 THEN 'Triggered by CI pipeline ' || g.g END,
              rv.environment_id, rv.name, rv.id, rv.revision_number, rv.snapshot_hash,
              -- As POST /test-runs stores it: NULL with a revision (its snapshot is the revision's).
              CASE WHEN rv.id IS NULL THEN '{}'::json END,
              CASE WHEN g.g % 4 <> 0 THEN ms.ids[1 + (g.g * cardinality(ms.ids)) / ($2::int + 1)] END,
              'v' || (1 + g.g / 10000) || '.' || ((g.g / 100) % 100) || '.' || (g.g % 100),
              us.ids[1 + g.g % cardinality(us.ids)], us.ids[1 + (g.g / 7) % cardinality(us.ids)],
              g.status,
              CASE WHEN g.status <> 'not_started' THEN g.ts + interval '5 minutes' END,
              CASE WHEN g.status IN ('completed', 'archived') THEN g.ts + interval '2 hours' END,
              CASE WHEN g.status = 'archived' THEN g.ts + interval '30 days' END,
              g.ts,
              CASE WHEN g.status = 'archived' THEN g.ts + interval '30 days' ELSE g.ts + interval '2 hours' END
         FROM g CROSS JOIN ms CROSS JOIN us
         LEFT JOIN bench_rev rv ON g.with_env AND rv.i = (g.g * 7919) % $3::int`,
      [projectId, n, Math.max(revisions, 1)],
    );
    await this.q(`DROP TABLE bench_rev`);
  }

  /**
   * `per` items a run, over distinct cases; statuses by a hash, none pending in closed runs. The
   * case's key/title/priority/tags are not copied onto the items (NULL while the case is
   * unchanged, as the service writes them); the suite is.
   */
  private async runItems(projectId: string, per: number): Promise<void> {
    const cases = await this.temp(
      'bench_case',
      `SELECT t.id, t.suite_id, s.name AS suite_name,
              (row_number() OVER (ORDER BY t.key_number))::int - 1 AS i
         FROM test_cases t LEFT JOIN suites s ON s.id = t.suite_id
        WHERE t.project_id = $1 AND t.status = 'active'`,
      [projectId],
    );
    await this.q(
      `WITH r AS (
         SELECT id, created_at, updated_at, status, assignee_id,
                (row_number() OVER (ORDER BY created_at, id))::int AS rn
           FROM test_runs WHERE project_id = $1
       ),
       x AS (
         SELECT r.*, (r.rn * 7 + k * greatest($3::int / $2::int, 1)) % $3::int AS ci,
                abs(hashint8(r.rn::bigint * 64 + k)) % 100 AS h
           FROM r CROSS JOIN generate_series(0, $2::int - 1) k
       )
       INSERT INTO run_items (id, project_id, test_run_id, test_case_id, assignee_id, status, rows_total,
                              rows_passed, rows_failed, comment, suite_id, suite_name, last_executed_at,
                              created_at, updated_at)
       SELECT pg_temp.u7(x.created_at), $1, x.id, c.id, x.assignee_id, st.status, 1,
              (st.status = 'passed')::int, (st.status IN ('failure', 'error', 'blocked'))::int,
              CASE WHEN st.status IN ('failure', 'error') THEN 'AssertionError: expected 200 but was 500' END,
              c.suite_id, c.suite_name,
              CASE WHEN st.status NOT IN ('untested', 'in_progress') THEN x.created_at + interval '1 hour' END,
              x.created_at, x.updated_at
         FROM x JOIN bench_case c ON c.i = x.ci
        CROSS JOIN LATERAL (
          SELECT CASE
                   WHEN x.status = 'not_started' THEN 'untested'
                   WHEN x.status = 'in_progress' AND x.h < 30 THEN 'untested'
                   WHEN x.status = 'in_progress' AND x.h < 35 THEN 'in_progress'
                   WHEN x.h < 80 THEN 'passed'
                   WHEN x.h < 88 THEN 'failure'
                   WHEN x.h < 90 THEN 'error'
                   WHEN x.h < 92 THEN 'blocked'
                   WHEN x.h < 97 THEN 'skipped'
                   WHEN x.h < 98 THEN 'xfailed'
                   WHEN x.h < 99 THEN 'xpassed'
                   ELSE 'untested' END AS status
        ) st
       ON CONFLICT DO NOTHING`,
      [projectId, per, cases],
    );
    await this.q(`DROP TABLE bench_case`);
  }

  /**
   * The two runs of the `compare-runs` scenario (issue #17 §1): `n` items each, completed, on one
   * environment whose revision changed between them (revision 2, then 3: the comparison diffs the
   * two 200-node snapshots), two and three days old (off the first list page). The run drops the
   * first fifth of the base's cases and adds as many new ones; of the shared cases nine in ten keep
   * their base status and one in ten draws a new one from the same mix as the other runs, so every
   * change class occurs (added, removed, newly_failing, fixed, still_failing, unchanged, changed).
   */
  private async compareRuns(projectId: string, n: number): Promise<[string, string]> {
    const cases = await this.temp(
      'bench_case',
      `SELECT t.id, t.suite_id, s.name AS suite_name,
              (row_number() OVER (ORDER BY t.key_number))::int - 1 AS i
         FROM test_cases t LEFT JOIN suites s ON s.id = t.suite_id
        WHERE t.project_id = $1 AND t.status = 'active'`,
      [projectId],
    );
    const size = Math.min(n, Math.floor((cases * 5) / 6));
    const shift = Math.floor(size / 5);
    if (size < 10) throw new Error(`compare runs: ${cases} active cases are too few`);
    const runs = await this.q<{ id: string; k: number }>(
      `WITH env AS (
         SELECT e.id, e.name FROM environments e
          WHERE e.project_id = $1 AND e.current_revision_number >= 3
          ORDER BY e.created_at LIMIT 1
       ), src AS (
         SELECT milestone_id, assignee_id, created_by FROM test_runs
          WHERE project_id = $1 AND status = 'completed' ORDER BY created_at DESC LIMIT 1
       )
       INSERT INTO test_runs (id, project_id, name, description, environment_id, environment_name,
                              environment_revision_id, environment_revision_number, environment_snapshot_hash,
                              environment_snapshot, milestone_id, build, assignee_id, created_by, status,
                              started_at, completed_at, created_at, updated_at)
       SELECT pg_temp.u7(t.ts), $1, 'Nightly regression (compare ' || t.k || ')', 'Bench compare pair',
              env.id, env.name, rv.id, rv.revision_number, rv.snapshot_hash, NULL,
              src.milestone_id, 'v9.0.' || t.k, src.assignee_id, src.created_by, 'completed',
              t.ts + interval '5 minutes', t.ts + interval '2 hours', t.ts, t.ts + interval '2 hours'
         FROM (VALUES (1, now() - interval '3 days'), (2, now() - interval '2 days')) t(k, ts)
        CROSS JOIN env CROSS JOIN src
         JOIN environment_revisions rv ON rv.environment_id = env.id AND rv.revision_number = t.k + 1
       RETURNING id, (CASE WHEN name LIKE '%(compare 1)' THEN 1 ELSE 2 END) AS k`,
      [projectId],
    );
    const base = runs.find((r) => r.k === 1)?.id;
    const run = runs.find((r) => r.k === 2)?.id;
    if (!base || !run) throw new Error('compare runs: no environment with three revisions');
    // The status mix of runItems for closed runs, by a hash h in 0..99.
    const mix = (h: string) => `CASE WHEN ${h} < 80 THEN 'passed' WHEN ${h} < 88 THEN 'failure'
      WHEN ${h} < 90 THEN 'error' WHEN ${h} < 92 THEN 'blocked' WHEN ${h} < 97 THEN 'skipped'
      WHEN ${h} < 98 THEN 'xfailed' WHEN ${h} < 99 THEN 'xpassed' ELSE 'untested' END`;
    await this.q(
      `WITH r AS (
         SELECT id, created_at, updated_at, assignee_id, k FROM test_runs
           JOIN unnest(ARRAY[$2::uuid, $3::uuid]) WITH ORDINALITY AS p(rid, k) ON p.rid = test_runs.id
       ),
       x AS (
         SELECT r.*, g AS ci,
                abs(hashint8(g::bigint * 3)) % 100 AS h0,
                abs(hashint8(g::bigint * 3 + 1)) % 100 AS h1,
                abs(hashint8(g::bigint * 3 + 2)) % 100 AS h2
           FROM r CROSS JOIN LATERAL generate_series((r.k - 1) * $5::int, (r.k - 1) * $5::int + $4::int - 1) g
       )
       INSERT INTO run_items (id, project_id, test_run_id, test_case_id, assignee_id, status, rows_total,
                              rows_passed, rows_failed, comment, suite_id, suite_name, last_executed_at,
                              created_at, updated_at)
       SELECT pg_temp.u7(x.created_at), $1, x.id, c.id, x.assignee_id, st.status, 1,
              (st.status = 'passed')::int, (st.status IN ('failure', 'error', 'blocked'))::int,
              CASE WHEN st.status IN ('failure', 'error') THEN 'AssertionError: expected 200 but was 500' END,
              c.suite_id, c.suite_name,
              CASE WHEN st.status <> 'untested' THEN x.created_at + interval '1 hour' END,
              x.created_at, x.updated_at
         FROM x JOIN bench_case c ON c.i = x.ci
        CROSS JOIN LATERAL (
          SELECT CASE WHEN x.k = 1 OR x.h1 < 90 THEN ${mix('x.h0')} ELSE ${mix('x.h2')} END AS status
        ) st`,
      [projectId, base, run, size, shift],
    );
    await this.q(`DROP TABLE bench_case`);
    return [base, run];
  }

  /** The run counters the service keeps on each run, recomputed from the items. */
  private async runCounters(projectId: string): Promise<void> {
    await this.q(
      `UPDATE test_runs r
          SET planned_item_count = a.total,
              count_untested = a.untested, count_in_progress = a.in_progress, count_passed = a.passed,
              count_error = a.error, count_failure = a.failure, count_blocked = a.blocked,
              count_skipped = a.skipped, count_xfailed = a.xfailed, count_xpassed = a.xpassed
         FROM (
           SELECT test_run_id, count(*)::int AS total,
                  count(*) FILTER (WHERE status = 'untested')::int AS untested,
                  count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
                  count(*) FILTER (WHERE status = 'passed')::int AS passed,
                  count(*) FILTER (WHERE status = 'error')::int AS error,
                  count(*) FILTER (WHERE status = 'failure')::int AS failure,
                  count(*) FILTER (WHERE status = 'blocked')::int AS blocked,
                  count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
                  count(*) FILTER (WHERE status = 'xfailed')::int AS xfailed,
                  count(*) FILTER (WHERE status = 'xpassed')::int AS xpassed
             FROM run_items WHERE project_id = $1 GROUP BY test_run_id
         ) a
        WHERE r.id = a.test_run_id`,
      [projectId],
    );
  }

  /** Spot checks that the data is what the service itself would have written. */
  private async verify(main: string): Promise<void> {
    const revs = await this.q<{ full_snapshot: unknown; snapshot_hash: string }>(
      `SELECT full_snapshot, snapshot_hash FROM environment_revisions WHERE project_id = $1 ORDER BY random() LIMIT 3`,
      [main],
    );
    for (const r of revs) {
      if (snapshotHash(r.full_snapshot) !== r.snapshot_hash) {
        throw new Error(
          `seeded snapshot hash mismatch: ${r.snapshot_hash} vs ${snapshotHash(r.full_snapshot)}`,
        );
      }
    }
    const bad = await this.q<{ n: string }>(
      `SELECT count(*) AS n FROM (SELECT * FROM test_runs WHERE project_id = $1 ORDER BY random() LIMIT 500) r
        WHERE r.planned_item_count <> (SELECT count(*) FROM run_items i WHERE i.test_run_id = r.id)
           OR r.count_passed <> (SELECT count(*) FROM run_items i WHERE i.test_run_id = r.id AND i.status = 'passed')`,
      [main],
    );
    if (Number(bad[0].n) > 0)
      throw new Error(`${bad[0].n} seeded runs have counters that disagree with their items`);
  }

  private async countRows(main: string, small: string, graph: string): Promise<void> {
    const one = async (name: string, sql: string, params: unknown[]) => {
      const rows = await this.q<{ n: string }>(sql, params);
      this.counts[name] = Number(rows[0].n);
    };
    await one('users', `SELECT count(*) AS n FROM users`, []);
    await one('main.test_runs', `SELECT count(*) AS n FROM test_runs WHERE project_id = $1`, [
      main,
    ]);
    await one('main.run_items', `SELECT count(*) AS n FROM run_items WHERE project_id = $1`, [
      main,
    ]);
    await one('main.test_cases', `SELECT count(*) AS n FROM test_cases WHERE project_id = $1`, [
      main,
    ]);
    await one('main.environments', `SELECT count(*) AS n FROM environments WHERE project_id = $1`, [
      main,
    ]);
    await one(
      'main.environment_revisions',
      `SELECT count(*) AS n FROM environment_revisions WHERE project_id = $1`,
      [main],
    );
    await one('main.components', `SELECT count(*) AS n FROM components WHERE project_id = $1`, [
      main,
    ]);
    await one(
      'main.component_dependencies',
      `SELECT count(*) AS n FROM component_dependencies WHERE project_id = $1`,
      [main],
    );
    await one('main.products', `SELECT count(*) AS n FROM products WHERE project_id = $1`, [main]);
    await one(
      'main.coverages',
      `SELECT count(*) AS n FROM test_case_component_coverages WHERE project_id = $1`,
      [main],
    );
    await one('small.test_runs', `SELECT count(*) AS n FROM test_runs WHERE project_id = $1`, [
      small,
    ]);
    await one('graph.components', `SELECT count(*) AS n FROM components WHERE project_id = $1`, [
      graph,
    ]);
    await one(
      'graph.component_dependencies',
      `SELECT count(*) AS n FROM component_dependencies WHERE project_id = $1`,
      [graph],
    );
    await one('database_bytes', `SELECT pg_database_size(current_database()) AS n`, []);
  }

  private async sample(main: string, graph: string) {
    const ids = async (sql: string, params: unknown[]) =>
      (await this.q<{ id: string }>(sql, params)).map((r) => r.id);
    return {
      runIds: await ids(
        `SELECT id FROM test_runs WHERE project_id = $1 AND environment_id IS NOT NULL ORDER BY random() LIMIT 2000`,
        [main],
      ),
      runIdsWithoutEnvironment: await ids(
        `SELECT id FROM test_runs WHERE project_id = $1 AND environment_id IS NULL ORDER BY random() LIMIT 2000`,
        [main],
      ),
      milestoneIds: await ids(
        `SELECT id FROM milestones WHERE project_id = $1 AND status <> 'archived'`,
        [main],
      ),
      environmentIds: await ids(
        `SELECT id FROM environments WHERE project_id = $1 ORDER BY created_at`,
        [main],
      ),
      productIds: await ids(`SELECT id FROM products WHERE project_id = $1 ORDER BY key`, [main]),
      caseIds: await ids(
        `SELECT id FROM test_cases WHERE project_id = $1 AND status = 'active' ORDER BY random() LIMIT 2000`,
        [main],
      ),
      componentIds: await ids(`SELECT id FROM components WHERE project_id = $1 ORDER BY key`, [
        main,
      ]),
      graphComponentIds: await ids(`SELECT id FROM components WHERE project_id = $1 ORDER BY key`, [
        graph,
      ]),
      graphEdges: (
        await this.q<{ s: string; t: string }>(
          `SELECT source_component_id AS s, target_component_id AS t FROM component_dependencies
            WHERE project_id = $1 ORDER BY random() LIMIT 500`,
          [graph],
        )
      ).map((r): [string, string] => [r.s, r.t]),
    };
  }
}
