/** The API's response shapes the dashboard reads (a subset of openapi.json's schemas). */

export interface Problem {
  status: number;
  title: string;
  detail?: string;
  code?: string;
  errors?: Record<string, string[]>;
}

export interface Page<T> {
  items: T[];
  page: number;
  page_size: number;
  has_next: boolean;
  total: number;
}

export interface Project {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
}

export const RUN_STATUSES = ['not_started', 'in_progress', 'completed', 'archived'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const ITEM_STATUSES = [
  'passed',
  'failure',
  'error',
  'blocked',
  'skipped',
  'xfailed',
  'xpassed',
  'in_progress',
  'untested',
] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

export interface RunSummary {
  total: number;
  untested: number;
  in_progress: number;
  passed: number;
  error: number;
  failure: number;
  blocked: number;
  skipped: number;
  xfailed: number;
  xpassed: number;
  pass_rate: number;
}

export interface TestRun {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  environment_id: string | null;
  environment_name: string | null;
  environment_revision_number: number | null;
  milestone_name: string | null;
  build: string | null;
  /** Where the run comes from in CI (null: no CI field at all; absent before run metadata existed). */
  ci?: { provider: string | null; branch: string | null; commit_sha: string | null; job_url: string | null } | null;
  status: RunStatus;
  created_by_name: string | null;
  started_at: string | null;
  completed_at: string | null;
  summary: RunSummary;
  status_breakdown: { items: Array<{ status: ItemStatus; count: number }> };
  created_at: string;
}

export interface RunCase {
  id: string;
  test_case_id: string;
  test_case_key: string | null;
  test_case_title: string;
  suite_name: string | null;
  status: ItemStatus;
  rows_total: number;
  rows_passed: number;
  rows_failed: number;
  comment: string | null;
  last_executed_at: string | null;
}

export const CHANGE_CLASSES = [
  'newly_failing',
  'fixed',
  'still_failing',
  'added',
  'removed',
  'changed',
  'unchanged',
] as const;
export type ChangeClass = (typeof CHANGE_CLASSES)[number];

export interface CompareRunSummary {
  id: string;
  name: string;
  build: string | null;
  status: RunStatus;
  environment_revision_number: number | null;
  created_at: string;
}

export interface RunComparison {
  run: CompareRunSummary;
  base: CompareRunSummary;
  counts: Record<ChangeClass, number>;
  build_changed: boolean;
  environment: { same_environment: boolean; from_revision: number | null; to_revision: number | null; changed: boolean } | null;
  datasets: Array<{ dataset_id: string; name: string; from_revision: number | null; to_revision: number | null }>;
  items: Array<{ test_case_id: string; title: string; change: ChangeClass; base_status: string | null; status: string | null }>;
  total: number;
  page: number;
  page_size: number;
  has_next: boolean;
}

export interface FlakyCase {
  test_case_id: string;
  title: string;
  runs: number;
  passed: number;
  failing: number;
  flips: number;
  flip_rate: number;
  flaky_attempts: number;
  last_status: ItemStatus | null;
  last_failure_run_id: string | null;
  /** The window the stats cover, newest run first. */
  recent: FlakyRecentResult[];
}

export interface FlakyRecentResult {
  run_id: string;
  status: ItemStatus;
}

export interface Environment {
  id: string;
  project_id: string;
  name: string;
  kind: string | null;
  status: string;
  description: string | null;
  tags: string[];
  use_cases: string[];
  topology: Topology | null;
  current_revision_number: number;
  archived_at: string | null;
}

export interface TopologyNode {
  name: string;
  host_type?: string | null;
  role?: string | null;
  provider?: string | null;
  region?: string | null;
  endpoint?: string | null;
  count?: number | null;
}

export interface TopologyComponent {
  name: string;
  component_type?: string | null;
  endpoints?: string[];
  nodes?: TopologyNode[];
}

export interface Topology {
  load_generators?: TopologyComponent[];
  system_under_test?: TopologyComponent[];
  supporting_services?: TopologyComponent[];
}

export interface EnvironmentRevision {
  id: string;
  revision_number: number;
  is_current: boolean;
  revision_note: string | null;
  snapshot_hash: string;
  created_at: string;
}

export interface RevisionDiff {
  from_revision: number;
  to_revision: number;
  identical: boolean;
  counts: { added: number; removed: number; changed: number };
  changes: Array<{ op: 'added' | 'removed' | 'changed'; path: Array<string | number>; from?: unknown; to?: unknown }>;
}

export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

export interface Product {
  id: string;
  name: string;
  key: string | null;
  description: string | null;
  status: string;
}

export interface ComponentCoverage {
  component_id: string;
  component_key: string | null;
  component_name: string;
  risk_level: RiskLevel;
  risk_score: number;
  coverage_score: number;
  required_coverage_score: number;
  adequately_covered: boolean;
  uncovered: boolean;
  smoke_case_count: number;
  regression_case_count: number;
  deep_case_count: number;
}

export interface ProductSummary {
  product_id: string;
  total_components: number;
  components_with_cases: number;
  adequately_covered_components: number;
  inadequately_covered_components: number;
  uncovered_components: number;
  high_risk_uncovered_components: number;
  coverage_score_total: number;
  required_coverage_score_total: number;
  total_cases: number;
  mandatory_release_cases: number;
  automated_cases: number;
  manual_cases: number;
  per_component_breakdown: ComponentCoverage[];
}

export interface Readiness {
  verdict: 'ready' | 'not_ready';
  evaluated_at: string;
  criteria: { environment_id: string | null; build: string | null; min_risk_level: RiskLevel };
  counts: { components: number; uncovered: number; failing: number; not_run: number; passing: number };
  blockers: Array<{
    component_id: string;
    component_name: string;
    risk_level: RiskLevel;
    risk_score: number;
    reason: 'uncovered' | 'failing' | 'not_run';
    test_case_ids: string[];
  }>;
}
