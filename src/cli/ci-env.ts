/**
 * CI metadata from the environment of the pipeline that runs `tms` (GitHub Actions, GitLab CI,
 * Jenkins). Pure: the environment is a parameter.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export interface CiInfo {
  provider: 'github-actions' | 'gitlab-ci' | 'jenkins';
  /** The run number (GitHub), pipeline id (GitLab) or build number (Jenkins). */
  number: string | null;
  branch: string | null;
  commit_sha: string | null;
  job_url: string | null;
  pipeline_id: string | null;
}

/** Characters of the commit SHA kept in the derived `build`. */
export const BUILD_SHA_LENGTH = 12;
/** Longest `build` a run accepts. */
export const BUILD_MAX_LENGTH = 255;

function v(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

/** The CI provider running us, or null outside CI (or on a provider we do not know). */
export function detectCi(env: Env): CiInfo | null {
  if (env.GITHUB_ACTIONS === 'true') {
    const server = v(env, 'GITHUB_SERVER_URL');
    const repo = v(env, 'GITHUB_REPOSITORY');
    const runId = v(env, 'GITHUB_RUN_ID');
    return {
      provider: 'github-actions',
      number: v(env, 'GITHUB_RUN_NUMBER'),
      branch: v(env, 'GITHUB_HEAD_REF') ?? v(env, 'GITHUB_REF_NAME'),
      commit_sha: v(env, 'GITHUB_SHA'),
      job_url: server && repo && runId ? `${server}/${repo}/actions/runs/${runId}` : null,
      pipeline_id: runId,
    };
  }
  if (env.GITLAB_CI === 'true') {
    return {
      provider: 'gitlab-ci',
      number: v(env, 'CI_PIPELINE_ID'),
      // A merge request pipeline: its source branch (CI_COMMIT_REF_NAME may be the merged ref).
      branch: v(env, 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME') ?? v(env, 'CI_COMMIT_REF_NAME'),
      commit_sha: v(env, 'CI_COMMIT_SHA'),
      job_url: v(env, 'CI_JOB_URL'),
      pipeline_id: v(env, 'CI_PIPELINE_ID'),
    };
  }
  if (v(env, 'JENKINS_URL') !== null || v(env, 'JENKINS_HOME') !== null) {
    // Multibranch pipelines: CHANGE_BRANCH (a pull request's source), else BRANCH_NAME; the Git
    // plugin: GIT_BRANCH (`origin/main`, `refs/remotes/origin/main`).
    const branch = v(env, 'CHANGE_BRANCH') ?? v(env, 'BRANCH_NAME') ?? v(env, 'GIT_BRANCH');
    return {
      provider: 'jenkins',
      number: v(env, 'BUILD_NUMBER'),
      branch: branch === null ? null : branch.replace(/^(refs\/remotes\/)?origin\//, ''),
      commit_sha: v(env, 'GIT_COMMIT'),
      job_url: v(env, 'BUILD_URL'),
      pipeline_id: v(env, 'BUILD_TAG') ?? v(env, 'BUILD_NUMBER'),
    };
  }
  return null;
}

/**
 * The `build` of a run created in CI: `<branch> #<number> (<sha, 12 characters>)`, leaving out
 * what the provider did not give; null when it gave none of them.
 */
export function ciBuild(ci: CiInfo | null): string | null {
  if (ci === null) return null;
  const parts: string[] = [];
  if (ci.branch !== null) parts.push(ci.branch);
  if (ci.number !== null) parts.push(`#${ci.number}`);
  if (ci.commit_sha !== null) parts.push(`(${ci.commit_sha.slice(0, BUILD_SHA_LENGTH)})`);
  if (parts.length === 0) return null;
  return parts.join(' ').slice(0, BUILD_MAX_LENGTH);
}

// ---------------------------------------------------------------------------------------------
// The run's `ci` object and attributes (issue #24 item 5). The server's bounds, repeated here
// because tms imports nothing of the server (src/modules/test-runs/run-metadata.ts).

/** Longest value the server takes per `ci` field. */
export const CI_FIELD_MAX_LENGTHS = {
  provider: 64,
  branch: 255,
  commit_sha: 64,
  job_url: 2048,
  pipeline_id: 255,
} as const;
export type CiField = keyof typeof CI_FIELD_MAX_LENGTHS;
/** The run's `ci` object as tms sends it (fields it does not know are left out). */
export type RunCiInput = Partial<Record<CiField, string>>;

const COMMIT_SHA = /^[0-9a-f]{7,64}$/i;
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Attribute keys the server accepts. */
export const ATTRIBUTE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,63}$/;
export const MAX_ATTRIBUTES = 50;
export const ATTRIBUTE_VALUE_MAX_LENGTH = 256;

function httpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Why the server would refuse this `ci` value, or null. */
export function ciValueProblem(field: CiField, value: string): string | null {
  if ([...value].length > CI_FIELD_MAX_LENGTHS[field]) {
    return `at most ${CI_FIELD_MAX_LENGTHS[field]} characters`;
  }
  if (CONTROL.test(value)) return 'no control characters';
  if (field === 'commit_sha' && !COMMIT_SHA.test(value)) return '7 to 64 hexadecimal digits';
  if (field === 'job_url' && (/\s/.test(value) || !httpUrl(value))) return 'an http(s) URL';
  return null;
}

/**
 * The run's `ci` object from the detected provider: what the server would refuse (a commit that is
 * not hex, a job URL that is not http(s), an over-long value) is left out rather than failing the
 * import; null outside CI or when nothing is left.
 */
export function runCiFromEnv(ci: CiInfo | null): RunCiInput | null {
  if (ci === null) return null;
  const out: RunCiInput = {};
  for (const field of Object.keys(CI_FIELD_MAX_LENGTHS) as CiField[]) {
    const value = ci[field];
    if (value !== null && ciValueProblem(field, value) === null) out[field] = value;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * `--attribute key=value` options (split at the first `=`) as the run's attributes. Throws (the
 * caller turns it into a usage error) on a missing `=`, a key the server refuses, a repeated key,
 * a value too long, or more than {@link MAX_ATTRIBUTES}.
 */
export function parseAttributeOptions(values: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const text of values ?? []) {
    const at = text.indexOf('=');
    if (at < 0) throw new Error(`--attribute ${text}: expected key=value`);
    const key = text.slice(0, at);
    const value = text.slice(at + 1);
    if (!ATTRIBUTE_KEY.test(key)) {
      throw new Error(
        `--attribute ${text}: the key must be 1-64 characters: letters, digits and _ . - /, starting with a letter or digit`,
      );
    }
    if (Object.prototype.hasOwnProperty.call(out, key)) {
      throw new Error(`--attribute ${key} is given more than once`);
    }
    if ([...value].length > ATTRIBUTE_VALUE_MAX_LENGTH || CONTROL.test(value)) {
      throw new Error(
        `--attribute ${key}: the value must be at most ${ATTRIBUTE_VALUE_MAX_LENGTH} characters, without control characters`,
      );
    }
    out[key] = value;
  }
  if (Object.keys(out).length > MAX_ATTRIBUTES) {
    throw new Error(`at most ${MAX_ATTRIBUTES} --attribute options`);
  }
  return out;
}

/** Metadata of the run `tms import` creates: explicit options over what CI tells. */
export interface RunMetadata {
  build: string | null;
  ci: RunCiInput | null;
  attributes: Record<string, string>;
}

/**
 * The run's build, `ci` object and attributes: `--build`, `--branch`, `--commit-sha` and
 * `--attribute` win over the CI provider's variables (an explicit value the server would refuse
 * throws). Outside CI only the explicit values are sent.
 */
export function runMetadata(
  explicit: { build?: string; branch?: string; commitSha?: string; attributes?: readonly string[] },
  env: Env,
): RunMetadata {
  const detected = detectCi(env);
  const ci: RunCiInput = { ...(runCiFromEnv(detected) ?? {}) };
  for (const [field, flag, value] of [
    ['branch', '--branch', explicit.branch],
    ['commit_sha', '--commit-sha', explicit.commitSha],
  ] as const) {
    if (value === undefined) continue;
    const problem = ciValueProblem(field, value.trim());
    if (problem !== null) throw new Error(`${flag} ${value}: ${problem}`);
    ci[field] = value.trim();
  }
  return {
    build: explicit.build ?? ciBuild(detected),
    ci: Object.keys(ci).length > 0 ? ci : null,
    attributes: parseAttributeOptions(explicit.attributes),
  };
}
