import { ciBuild, detectCi, Env, parseAttributeOptions, runCiFromEnv, runMetadata } from './ci-env';

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('detectCi', () => {
  it.each<[string, Env, ReturnType<typeof detectCi>]>([
    ['outside CI', { HOME: '/root' }, null],
    ['GITHUB_ACTIONS other than true', { GITHUB_ACTIONS: 'false', GITHUB_SHA: SHA }, null],
    [
      'GitHub Actions, push',
      {
        GITHUB_ACTIONS: 'true',
        GITHUB_RUN_NUMBER: '871',
        GITHUB_RUN_ID: '9876543210',
        GITHUB_SHA: SHA,
        GITHUB_REF_NAME: 'main',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_REPOSITORY: 'acme/shop',
      },
      {
        provider: 'github-actions',
        number: '871',
        branch: 'main',
        commit_sha: SHA,
        job_url: 'https://github.com/acme/shop/actions/runs/9876543210',
        pipeline_id: '9876543210',
      },
    ],
    [
      'GitHub Actions, pull request: the head branch, not 12/merge',
      { GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: '12/merge', GITHUB_HEAD_REF: 'feature/x' },
      {
        provider: 'github-actions',
        number: null,
        branch: 'feature/x',
        commit_sha: null,
        job_url: null,
        pipeline_id: null,
      },
    ],
    [
      'GitLab CI',
      {
        GITLAB_CI: 'true',
        CI_PIPELINE_ID: '4242',
        CI_COMMIT_SHA: SHA,
        CI_COMMIT_REF_NAME: 'release/2.4',
        CI_JOB_URL: 'https://gitlab.example.com/acme/shop/-/jobs/77',
      },
      {
        provider: 'gitlab-ci',
        number: '4242',
        branch: 'release/2.4',
        commit_sha: SHA,
        job_url: 'https://gitlab.example.com/acme/shop/-/jobs/77',
        pipeline_id: '4242',
      },
    ],
    [
      'Jenkins: origin/ is dropped from GIT_BRANCH',
      {
        JENKINS_URL: 'https://ci.example.com/',
        BUILD_NUMBER: '15',
        GIT_COMMIT: SHA,
        GIT_BRANCH: 'origin/main',
        BUILD_URL: 'https://ci.example.com/job/shop/15/',
        BUILD_TAG: 'jenkins-shop-15',
      },
      {
        provider: 'jenkins',
        number: '15',
        branch: 'main',
        commit_sha: SHA,
        job_url: 'https://ci.example.com/job/shop/15/',
        pipeline_id: 'jenkins-shop-15',
      },
    ],
    [
      'GitLab CI, merge request pipeline: the source branch',
      {
        GITLAB_CI: 'true',
        CI_COMMIT_REF_NAME: 'refs/merge-requests/7/head',
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/y',
      },
      {
        provider: 'gitlab-ci',
        number: null,
        branch: 'feature/y',
        commit_sha: null,
        job_url: null,
        pipeline_id: null,
      },
    ],
    [
      'Jenkins multibranch: CHANGE_BRANCH of a pull request over BRANCH_NAME (PR-12) and GIT_BRANCH',
      {
        JENKINS_HOME: '/var/jenkins',
        BRANCH_NAME: 'PR-12',
        CHANGE_BRANCH: 'feature/z',
        GIT_BRANCH: 'origin/PR-12',
        BUILD_NUMBER: '3',
      },
      {
        provider: 'jenkins',
        number: '3',
        branch: 'feature/z',
        commit_sha: null,
        job_url: null,
        pipeline_id: '3',
      },
    ],
    [
      'Jenkins: refs/remotes/origin/ is dropped too',
      { JENKINS_URL: 'https://ci/', GIT_BRANCH: 'refs/remotes/origin/release/1' },
      {
        provider: 'jenkins',
        number: null,
        branch: 'release/1',
        commit_sha: null,
        job_url: null,
        pipeline_id: null,
      },
    ],
    [
      'blank variables count as absent',
      { GITLAB_CI: 'true', CI_PIPELINE_ID: '  ', CI_COMMIT_REF_NAME: '' },
      {
        provider: 'gitlab-ci',
        number: null,
        branch: null,
        commit_sha: null,
        job_url: null,
        pipeline_id: null,
      },
    ],
  ])('%s', (_name, env, expected) => {
    expect(detectCi(env)).toEqual(expected);
  });
});

describe('ciBuild', () => {
  const base = {
    provider: 'gitlab-ci' as const,
    number: null,
    branch: null,
    commit_sha: null,
    job_url: null,
    pipeline_id: null,
  };
  it.each<[string, Parameters<typeof ciBuild>[0], string | null]>([
    ['outside CI', null, null],
    ['nothing known', base, null],
    [
      'branch, number and short sha',
      { ...base, branch: 'main', number: '871', commit_sha: SHA },
      'main #871 (0123456789ab)',
    ],
    ['number only', { ...base, number: '15' }, '#15'],
    ['sha only', { ...base, commit_sha: SHA }, '(0123456789ab)'],
    ['at most 255 characters', { ...base, branch: 'b'.repeat(300) }, 'b'.repeat(255)],
  ])('%s', (_name, ci, expected) => {
    expect(ciBuild(ci)).toBe(expected);
  });
});

describe("runCiFromEnv: the run's ci object, leaving out what the server would refuse", () => {
  const base = {
    provider: 'jenkins' as const,
    number: '15',
    branch: 'main',
    commit_sha: SHA,
    job_url: 'https://ci.example.com/job/shop/15/',
    pipeline_id: 'jenkins-shop-15',
  };
  it.each<[string, Parameters<typeof runCiFromEnv>[0], ReturnType<typeof runCiFromEnv>]>([
    ['outside CI', null, null],
    [
      'every field',
      base,
      {
        provider: 'jenkins',
        branch: 'main',
        commit_sha: SHA,
        job_url: 'https://ci.example.com/job/shop/15/',
        pipeline_id: 'jenkins-shop-15',
      },
    ],
    [
      'a commit that is not hex, a job URL that is not http(s), a branch too long: left out',
      { ...base, commit_sha: 'HEAD', job_url: 'file:///tmp/x', branch: 'b'.repeat(256) },
      { provider: 'jenkins', pipeline_id: 'jenkins-shop-15' },
    ],
  ])('%s', (_name, ci, expected) => {
    expect(runCiFromEnv(ci)).toEqual(expected);
  });
});

describe('parseAttributeOptions (--attribute key=value)', () => {
  it.each<[string[], Record<string, string> | RegExp]>([
    [[], {}],
    [['team=payments', 'url=https://x/?a=b'], { team: 'payments', url: 'https://x/?a=b' }],
    [['empty='], { empty: '' }],
    [['team'], /expected key=value/],
    [['a b=c'], /the key must be/],
    [['a:b=c'], /the key must be/],
    [['a=1', 'a=2'], /more than once/],
    [[`v=${'x'.repeat(257)}`], /at most 256/],
    [Array.from({ length: 51 }, (_, i) => `k${i}=v`), /at most 50/],
  ])('%j', (values, expected) => {
    if (expected instanceof RegExp) expect(() => parseAttributeOptions(values)).toThrow(expected);
    else expect(parseAttributeOptions(values)).toEqual(expected);
  });
});

describe('runMetadata: explicit options over the CI provider', () => {
  const gitlab: Env = {
    GITLAB_CI: 'true',
    CI_PIPELINE_ID: '4242',
    CI_COMMIT_SHA: SHA,
    CI_COMMIT_REF_NAME: 'main',
    CI_JOB_URL: 'https://gitlab.example.com/acme/shop/-/jobs/77',
  };
  it.each<[string, Parameters<typeof runMetadata>[0], Env, ReturnType<typeof runMetadata>]>([
    ['outside CI, nothing given', {}, {}, { build: null, ci: null, attributes: {} }],
    [
      'outside CI, explicit values only',
      { build: 'b1', branch: 'dev', commitSha: 'abcdef0', attributes: ['team=x'] },
      {},
      { build: 'b1', ci: { branch: 'dev', commit_sha: 'abcdef0' }, attributes: { team: 'x' } },
    ],
    [
      'GitLab CI: everything from the variables',
      {},
      gitlab,
      {
        build: 'main #4242 (0123456789ab)',
        ci: {
          provider: 'gitlab-ci',
          branch: 'main',
          commit_sha: SHA,
          job_url: 'https://gitlab.example.com/acme/shop/-/jobs/77',
          pipeline_id: '4242',
        },
        attributes: {},
      },
    ],
    [
      'GitLab CI with --build, --branch and --commit-sha: those win, the rest from CI',
      { build: 'release', branch: 'hotfix', commitSha: 'fedcba9' },
      gitlab,
      {
        build: 'release',
        ci: {
          provider: 'gitlab-ci',
          branch: 'hotfix',
          commit_sha: 'fedcba9',
          job_url: 'https://gitlab.example.com/acme/shop/-/jobs/77',
          pipeline_id: '4242',
        },
        attributes: {},
      },
    ],
  ])('%s', (_name, explicit, env, expected) => {
    expect(runMetadata(explicit, env)).toEqual(expected);
  });

  it('refuses an explicit commit SHA or branch the server would refuse', () => {
    expect(() => runMetadata({ commitSha: 'HEAD' }, {})).toThrow(/--commit-sha HEAD: 7 to 64/);
    expect(() => runMetadata({ branch: 'b'.repeat(256) }, {})).toThrow(/--branch/);
  });
});
