import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { productionNodeArgs } from '../../bench/servers';

const ROOT = join(__dirname, '..', '..');

describe('node options of the production service', () => {
  it('npm start caps the V8 heap (keeps a 100,000-testcase import under 512 MB, bench/README.md)', () => {
    expect(productionNodeArgs(ROOT)).toContain('--max-old-space-size=1024');
  });

  it('the Dockerfile starts the service with the same options as npm start', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const cmd = dockerfile
      .split('\n')
      .filter((line) => line.startsWith('CMD '))
      .pop();
    expect(cmd).toBeDefined();
    const args = JSON.parse((cmd ?? '').slice(4)) as string[];
    expect(args).toEqual(['node', ...productionNodeArgs(ROOT), 'dist/src/main.js']);
  });
});
