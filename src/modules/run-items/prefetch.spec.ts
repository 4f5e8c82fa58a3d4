import { prefetch } from './prefetch';

function* counted(n: number, log: number[], failAt = -1): Generator<number> {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error(`failed at ${i}`);
    log.push(i);
    yield i;
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('prefetch', () => {
  it.each([
    ['read at once', 10, 0],
    ['read after one turn (partly built)', 200, 1],
    ['read after everything was built', 200, 10],
    ['empty', 0, 3],
  ])('%s: every value once, in order', async (_label, n, turns) => {
    const log: number[] = [];
    const p = prefetch(counted(n, log), 64);
    for (let i = 0; i < turns; i++) await turn();
    const built = log.length;
    expect(built).toBe(Math.min(n, turns * 64));
    expect([...p.rest()]).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(log).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('builds only between turns of the event loop, never synchronously', () => {
    const log: number[] = [];
    prefetch(counted(5, log)).stop();
    expect(log).toEqual([]);
  });

  it('stops building when stopped', async () => {
    const log: number[] = [];
    const p = prefetch(counted(1000, log), 10);
    await turn();
    p.stop();
    await turn();
    await turn();
    expect(log).toHaveLength(10);
  });

  it('an error while building ahead is thrown to the reader', async () => {
    const log: number[] = [];
    const p = prefetch(counted(100, log, 30), 10);
    for (let i = 0; i < 5; i++) await turn();
    expect(() => [...p.rest()]).toThrow('failed at 30');
  });
});
