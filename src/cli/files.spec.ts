import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expandFileArgs, globBase, globToRegExp } from './files';

describe('globToRegExp', () => {
  it.each<[string, string, boolean]>([
    ['*.xml', 'a.xml', true],
    ['*.xml', 'dir/a.xml', false],
    ['*.xml', 'a.json', false],
    ['reports/*.xml', 'reports/TEST-a.xml', true],
    ['reports/*.xml', 'reports/sub/TEST-a.xml', false],
    ['reports/**/*.xml', 'reports/TEST-a.xml', true],
    ['reports/**/*.xml', 'reports/x/y/TEST-a.xml', true],
    ['reports/**/*.xml', 'other/TEST-a.xml', false],
    ['**/TEST-*.xml', 'TEST-a.xml', true],
    ['**/TEST-*.xml', 'a/b/c/TEST-a.xml', true],
    ['**/TEST-*.xml', 'a/b/c/test-a.xml', false],
    ['reports/**', 'reports/a/b.json', true],
    ['TEST-?.xml', 'TEST-1.xml', true],
    ['TEST-?.xml', 'TEST-12.xml', false],
    ['a.b(c)+[d].xml', 'a.b(c)+[d].xml', true],
    ['a.xml', 'aXxml', false],
    ['./out/*.xml', 'out/r.xml', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(globToRegExp(pattern).test(path)).toBe(expected);
  });
});

describe('globBase', () => {
  it.each<[string, string]>([
    ['*.xml', '.'],
    ['reports/*.xml', 'reports'],
    ['target/surefire-reports/**/*.xml', 'target/surefire-reports'],
    ['a/*/b/*.xml', 'a'],
    ['/abs/dir/*.xml', '/abs/dir'],
  ])('%s → %s', (pattern, expected) => {
    expect(globBase(pattern)).toBe(expected);
  });
});

describe('expandFileArgs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tms-files-'));
    mkdirSync(join(dir, 'reports', 'nested'), { recursive: true });
    mkdirSync(join(dir, 'empty'));
    for (const f of [
      'reports/b.xml',
      'reports/a.xml',
      'reports/c.json',
      'reports/notes.txt',
      'reports/nested/d.xml',
      'top.xml',
    ]) {
      writeFileSync(join(dir, f), '<testsuite/>');
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each<[string, string[], string[]]>([
    ['a plain file', ['top.xml'], ['top.xml']],
    [
      'a directory: its xml and json files, sorted, not its subdirectories',
      ['reports'],
      ['reports/a.xml', 'reports/b.xml', 'reports/c.json'],
    ],
    ['a glob within one level', ['reports/*.xml'], ['reports/a.xml', 'reports/b.xml']],
    ['a ** glob', ['reports/**/*.xml'], ['reports/a.xml', 'reports/b.xml', 'reports/nested/d.xml']],
    [
      'duplicates once, first position kept',
      ['reports/b.xml', 'reports/*.xml'],
      ['reports/b.xml', 'reports/a.xml'],
    ],
  ])('%s', (_name, args, expected) => {
    expect(expandFileArgs(args, dir)).toEqual(expected);
  });

  it.each<[string, string, RegExp]>([
    ['a missing file', 'nope.xml', /nope\.xml: no such file or directory/],
    ['a glob matching nothing', 'reports/*.trx', /no file matches/],
    ['a glob under a missing directory', 'missing/*.xml', /no file matches/],
    ['a directory without reports', 'empty', /empty: no \*\.xml or \*\.json file in it/],
  ])('%s is a usage error', (_name, arg, message) => {
    expect(() => expandFileArgs([arg], dir)).toThrow(message);
  });
});

// Found by an audit: Dirent reports a symbolic link as neither a file nor a directory.
describe('expandFileArgs: symbolic links to reports', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tms-links-'));
    mkdirSync(join(dir, 'real'));
    mkdirSync(join(dir, 'links'));
    writeFileSync(join(dir, 'real', 'r1.xml'), '<testsuite/>');
    symlinkSync(join(dir, 'real', 'r1.xml'), join(dir, 'links', 'l1.xml'));
    symlinkSync(join(dir, 'real'), join(dir, 'links', 'dir-link'));
    symlinkSync(join(dir, 'nowhere.xml'), join(dir, 'links', 'dangling.xml'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a link to a file from a directory and from a glob; not links to directories or to nothing', () => {
    expect(expandFileArgs(['links'], dir)).toEqual([join('links', 'l1.xml')]);
    expect(expandFileArgs(['links/**/*.xml'], dir)).toEqual(['links/l1.xml']);
  });
});
