import {
  attributeFilters,
  attributesProblems,
  ciFieldProblem,
  CiField,
  ciOf,
  ciToStore,
  isHttpUrl,
  MAX_RUN_ATTRIBUTES,
  parseAttributePair,
  sortedAttributes,
} from './run-metadata';

const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

describe('attributesProblems', () => {
  it.each<[string, unknown, RegExp | null]>([
    ['an empty object', {}, null],
    [`${MAX_RUN_ATTRIBUTES} pairs`, many(MAX_RUN_ATTRIBUTES), null],
    [
      'usual keys',
      { team: 'x', 'python.version': '3.13', 'k8s/cluster': 'eu', a_b: '', 'A-1': 'y' },
      null,
    ],
    ['a key of 64 characters', { ['k'.repeat(64)]: 'v' }, null],
    ['a value of 256 characters (code points)', { v: '😀'.repeat(256) }, null],
    [`${MAX_RUN_ATTRIBUTES + 1} pairs`, many(MAX_RUN_ATTRIBUTES + 1), /at most 50/],
    ['a key of 65 characters', { ['k'.repeat(65)]: 'v' }, /not allowed/],
    ['an empty key', { '': 'v' }, /not allowed/],
    ['a key with a colon', { 'a:b': 'v' }, /not allowed/],
    ['a key with =', { 'a=b': 'v' }, /not allowed/],
    ['a key with a space', { 'a b': 'v' }, /not allowed/],
    ['a key starting with _', { _x: 'v' }, /not allowed/],
    ['__proto__ as a key', JSON.parse('{"__proto__": "v"}'), /not allowed/],
    ['a non-ASCII key', { ключ: 'v' }, /not allowed/],
    ['a number value', { n: 1 }, /string value/],
    ['a null value', { n: null }, /string value/],
    ['a value of 257 characters', { v: 'x'.repeat(257) }, /at most 256/],
    ['a NUL in a value', { v: 'a\u0000' }, /control/],
    ['a newline in a value', { v: 'a\nb' }, /control/],
    ['an array', ['a'], /must be an object/],
    ['a string', 'a', /must be an object/],
    ['null', null, /must be an object/],
  ])('%s', (_name, value, problem) => {
    const problems = attributesProblems(value);
    if (problem === null) expect(problems).toEqual([]);
    else expect(problems.join('\n')).toMatch(problem);
  });
});

describe('parseAttributePair (the attribute filter and form field)', () => {
  it.each<[string, ReturnType<typeof parseAttributePair> | RegExp]>([
    ['team:payments', { key: 'team', value: 'payments' }],
    ['url:https://x:8080/a', { key: 'url', value: 'https://x:8080/a' }],
    ['team:', { key: 'team', value: '' }],
    ['team', /key:value/],
    [':payments', /not allowed/],
    ['a b:c', /not allowed/],
    [`k:${'x'.repeat(257)}`, /at most 256/],
    ['k:a\u0001', /control/],
  ])('%s', (text, expected) => {
    const got = parseAttributePair(text);
    if (expected instanceof RegExp) expect('problem' in got && got.problem).toMatch(expected);
    else expect(got).toEqual(expected);
  });

  it('attributeFilters: one containment object per pair, in order', () => {
    expect(attributeFilters(['team:a', 'os:linux', 'team:b'])).toEqual([
      { team: 'a' },
      { os: 'linux' },
      { team: 'b' },
    ]);
    expect(attributeFilters(undefined)).toEqual([]);
  });
});

describe('ciFieldProblem', () => {
  it.each<[CiField, string, RegExp | null]>([
    ['commit_sha', 'abcdef0', null],
    ['commit_sha', 'ABCDEF0123456789abcdef0123456789abcdef01', null],
    ['commit_sha', 'a'.repeat(64), null],
    ['commit_sha', 'abcdef', /7 to 64 hexadecimal/],
    ['commit_sha', 'a'.repeat(65), /at most 64/],
    ['commit_sha', 'xyz1234', /hexadecimal/],
    ['commit_sha', 'abc 1234', /hexadecimal/],
    ['job_url', 'https://github.com/a/b/actions/runs/1', null],
    ['job_url', 'http://localhost:8080/job/1/', null],
    ['job_url', 'ftp://ci/1', /http/],
    ['job_url', 'javascript:alert(1)', /http/],
    ['job_url', '/relative/path', /http/],
    ['job_url', 'https://a.example/x y', /http/],
    ['job_url', `https://a.example/${'x'.repeat(2048)}`, /at most 2048/],
    ['branch', 'feature/ü-1', null],
    ['branch', 'b'.repeat(256), /at most 255/],
    ['branch', 'a\tb', /control/],
    ['provider', 'p'.repeat(65), /at most 64/],
    ['pipeline_id', '9876543210', null],
    ['pipeline_id', 'x'.repeat(256), /at most 255/],
  ])('%s %j', (field, value, problem) => {
    const got = ciFieldProblem(field, value);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });

  it('isHttpUrl needs a scheme and a host', () => {
    expect(isHttpUrl('https://x')).toBe(true);
    expect(isHttpUrl('https://')).toBe(false);
    expect(isHttpUrl('mailto:a@b')).toBe(false);
  });
});

describe('ci storage and answer', () => {
  const none = {
    ci_provider: null,
    ci_branch: null,
    ci_commit_sha: null,
    ci_job_url: null,
    ci_pipeline_id: null,
  };
  it('ciOf: null without any field, else all five keys', () => {
    expect(ciOf(none)).toBeNull();
    expect(ciOf({ ...none, ci_branch: 'main' })).toEqual({
      provider: null,
      branch: 'main',
      commit_sha: null,
      job_url: null,
      pipeline_id: null,
    });
  });

  it.each<[string, Parameters<typeof ciToStore>[0], ReturnType<typeof ciToStore>]>([
    [
      'null',
      null,
      { provider: null, branch: null, commit_sha: null, job_url: null, pipeline_id: null },
    ],
    [
      'blank fields are none, the SHA lowercased, values trimmed',
      { provider: ' gitlab-ci ', branch: '  ', commit_sha: 'ABCDEF0' },
      {
        provider: 'gitlab-ci',
        branch: null,
        commit_sha: 'abcdef0',
        job_url: null,
        pipeline_id: null,
      },
    ],
  ])('ciToStore: %s', (_name, input, expected) => {
    expect(ciToStore(input)).toEqual(expected);
  });

  it('sortedAttributes: by key, code unit order', () => {
    expect(sortedAttributes({ b: '1', B: '2', a: '3' })).toEqual([
      ['B', '2'],
      ['a', '3'],
      ['b', '1'],
    ]);
    expect(sortedAttributes(null)).toEqual([]);
  });
});
