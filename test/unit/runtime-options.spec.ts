import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { productionNodeArgs } from '../../bench/servers';

const ROOT = join(__dirname, '..', '..');

describe('node options of the production service', () => {
  it('npm start caps the V8 heap at 1 GiB (the memory paragraph of README.md)', () => {
    expect(productionNodeArgs(ROOT)).toContain('--max-old-space-size=1024');
  });

  it('npm start keeps the young generation at 16 MB a semi-space on every supported Node.js', () => {
    // Node.js 20 derives 16 MB from the 1 GiB cap; Node.js 24 would take 64 MB (the heap limit
    // 1,216 MB instead of 1,072), about 80 MB more resident memory for no measured speed.
    expect(productionNodeArgs(ROOT)).toContain('--max-semi-space-size=16');
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
