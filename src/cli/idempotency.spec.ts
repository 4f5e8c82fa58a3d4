import { idempotencyKey, sha256Hex } from './idempotency';

const A = sha256Hex('<testsuite name="a"/>');
const B = sha256Hex('<testsuite name="b"/>');
const target = { op: 'import', project: 'p1', run: null, run_name: 'Nightly', dry_run: false };

describe('idempotencyKey', () => {
  it('is printable ASCII of 1–255 characters', () => {
    const key = idempotencyKey(target, [A]);
    expect(key).toMatch(/^tms-[0-9a-f]{64}$/);
  });

  it('is the same for the same target and files, whatever the key order of the target', () => {
    const reordered = {
      dry_run: false,
      run_name: 'Nightly',
      run: null,
      project: 'p1',
      op: 'import',
    };
    expect(idempotencyKey(reordered, [A, B])).toBe(idempotencyKey(target, [A, B]));
  });

  it.each<[string, Parameters<typeof idempotencyKey>[0], string[]]>([
    ['another file content', target, [B]],
    ['another file order', target, [B, A]],
    ['one more file', target, [A, B]],
    ['another project', { ...target, project: 'p2' }, [A]],
    ['another run name', { ...target, run_name: 'nightly' }, [A]],
    ['a run instead of a run name', { ...target, run: 'r1', run_name: null }, [A]],
    ['a dry run', { ...target, dry_run: true }, [A]],
    ['null vs the string "null"', { ...target, run: 'null' }, [A]],
  ])('changes with %s', (_name, other, files) => {
    expect(idempotencyKey(other, files)).not.toBe(idempotencyKey(target, [A]));
  });
});
