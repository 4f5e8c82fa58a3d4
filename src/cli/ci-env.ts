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
      branch: v(env, 'CI_COMMIT_REF_NAME'),
      commit_sha: v(env, 'CI_COMMIT_SHA'),
      job_url: v(env, 'CI_JOB_URL'),
      pipeline_id: v(env, 'CI_PIPELINE_ID'),
    };
  }
  if (v(env, 'JENKINS_URL') !== null || v(env, 'JENKINS_HOME') !== null) {
    const branch = v(env, 'GIT_BRANCH');
    return {
      provider: 'jenkins',
      number: v(env, 'BUILD_NUMBER'),
      branch: branch === null ? null : branch.replace(/^origin\//, ''),
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
