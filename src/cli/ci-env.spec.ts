import { ciBuild, detectCi, Env } from './ci-env';

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
