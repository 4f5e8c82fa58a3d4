import {
  isEmptyRunMetadata,
  isRunMetadataFormField,
  parseRunMetadataForm,
  RUN_METADATA_FORM_VALUES_MAX,
} from './run-metadata-form';

const SHA = '9fceb02d0ae598e95dc970b74767f19372d61af8';

describe('parseRunMetadataForm', () => {
  it.each<[string, Record<string, unknown>, ReturnType<typeof parseRunMetadataForm>]>([
    ['nothing given', { dry_run: 'true' }, { metadata: {}, errors: {} }],
    [
      'every field, the SHA lowercased, values trimmed',
      {
        build: ' main #12 ',
        ci_provider: 'gitlab-ci',
        branch: 'main',
        commit_sha: SHA.toUpperCase(),
        job_url: 'https://gitlab.example.com/-/jobs/1',
        pipeline_id: '42',
        attribute: ['team:payments', 'url:https://x:1/a'],
      },
      {
        metadata: {
          build: 'main #12',
          ci: {
            provider: 'gitlab-ci',
            branch: 'main',
            commit_sha: SHA,
            job_url: 'https://gitlab.example.com/-/jobs/1',
            pipeline_id: '42',
          },
          attributes: { team: 'payments', url: 'https://x:1/a' },
        },
        errors: {},
      },
    ],
    [
      'one attribute (not an array)',
      { attribute: 'a:b' },
      { metadata: { attributes: { a: 'b' } }, errors: {} },
    ],
    [
      'blank values are not given',
      { branch: ' ', commit_sha: '', build: '' },
      { metadata: {}, errors: {} },
    ],
    [
      'a field given twice',
      { branch: ['a', 'b'] },
      { metadata: {}, errors: { branch: ['branch must be given at most once'] } },
    ],
    [
      'a commit SHA that is not hex',
      { commit_sha: 'nope' },
      { metadata: {}, errors: { commit_sha: ['commit_sha must be 7 to 64 hexadecimal digits'] } },
    ],
    [
      'the provider is named by its form field',
      { ci_provider: 'p'.repeat(65) },
      { metadata: {}, errors: { ci_provider: ['ci_provider must be at most 64 characters long'] } },
    ],
    [
      'an ftp job URL',
      { job_url: 'ftp://x/1' },
      {
        metadata: {},
        errors: { job_url: ['job_url must be an absolute http:// or https:// URL'] },
      },
    ],
    [
      'an attribute key repeated',
      { attribute: ['a:1', 'a:2'] },
      { metadata: {}, errors: { attribute: ['attribute "a" is given more than once'] } },
    ],
    [
      'a build of 256 characters',
      { build: 'b'.repeat(256) },
      { metadata: {}, errors: { build: ['build must be at most 255 characters long'] } },
    ],
  ])('%s', (_name, fields, expected) => {
    expect(parseRunMetadataForm(fields)).toEqual(expected);
  });

  it.each<[string, unknown, RegExp]>([
    ['no colon', 'team', /key:value/],
    ['a bad key', 'a b:c', /not allowed/],
    ['51 attributes', Array.from({ length: 51 }, (_, i) => `k${i}:v`), /at most 50/],
  ])('attribute: %s → 422 on `attribute`', (_name, attribute, message) => {
    const { metadata, errors } = parseRunMetadataForm({ attribute });
    expect(metadata).toEqual({});
    expect(errors.attribute.join('\n')).toMatch(message);
  });

  it('names its fields; the multipart limits make room for all of them', () => {
    for (const name of [
      'build',
      'ci_provider',
      'branch',
      'commit_sha',
      'job_url',
      'pipeline_id',
      'attribute',
    ]) {
      expect(isRunMetadataFormField(name)).toBe(true);
    }
    expect(isRunMetadataFormField('dry_run')).toBe(false);
    expect(RUN_METADATA_FORM_VALUES_MAX).toBe(6 + 50);
    expect(isEmptyRunMetadata({})).toBe(true);
    expect(isEmptyRunMetadata({ build: 'x' })).toBe(false);
  });
});
