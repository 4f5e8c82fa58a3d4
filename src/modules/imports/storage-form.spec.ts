import fc from 'fast-check';
import { extendStoragePath, storageSuitePath } from './storage-form';

describe('extendStoragePath', () => {
  it('extends a stored path exactly as storageSuitePath stores the longer path', () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 5 }),
      fc.constantFrom('', '  ', ' a ', 'x'.repeat(254), 'y'.repeat(255), 'z'.repeat(600)),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 12 }), (path) => {
        let stored: string[] = [];
        for (const name of path) stored = extendStoragePath(stored, name);
        expect(stored).toEqual(storageSuitePath(path));
      }),
      { seed: process.env.CI ? 22 : undefined, numRuns: 500 },
    );
  });
});
