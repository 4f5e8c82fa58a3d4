import type { MigrationInterface } from 'typeorm';
import { DeadlineExceeded, readinessVerdict, withDeadline } from './readiness';

class Init1700000000000 implements MigrationInterface {
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}
class Later1700000000100 implements MigrationInterface {
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}
const named: MigrationInterface = { name: 'Named1700000000200', up: async () => {}, down: async () => {} };

describe('readinessVerdict', () => {
  it.each([
    [[], [], 'ready'],
    [[new Init1700000000000()], ['Init1700000000000'], 'ready'],
    [[new Init1700000000000(), new Later1700000000100()], ['Init1700000000000'], 'migrations_pending'],
    [[new Init1700000000000()], [], 'migrations_pending'],
    // An applied migration the code no longer has does not make the instance unready.
    [[new Init1700000000000()], ['Init1700000000000', 'Gone1600000000000'], 'ready'],
    // The `name` property wins over the class name.
    [[named], ['Named1700000000200'], 'ready'],
    [[named], ['Object'], 'migrations_pending'],
  ] as Array<[MigrationInterface[], string[], string]>)('%j applied %j: %s', (migrations, applied, verdict) => {
    expect(readinessVerdict(migrations, applied)).toBe(verdict);
  });
});

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the work when it finishes first', async () => {
    await expect(withDeadline(Promise.resolve('ok'), 100)).resolves.toBe('ok');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('passes the work\'s own failure on', async () => {
    await expect(withDeadline(Promise.reject(new Error('refused')), 100)).rejects.toThrow('refused');
  });

  it('rejects at the deadline when the work never answers, and a late failure stays handled', async () => {
    let fail: (e: Error) => void = () => undefined;
    const stalled = new Promise<string>((_, reject) => (fail = reject));
    const outcome = withDeadline(stalled, 2000);
    jest.advanceTimersByTime(1999);
    const early = await Promise.race([outcome.then(() => 'settled', () => 'settled'), Promise.resolve('pending')]);
    expect(early).toBe('pending');
    jest.advanceTimersByTime(1);
    await expect(outcome).rejects.toBeInstanceOf(DeadlineExceeded);
    await expect(outcome).rejects.toThrow('No answer within 2000 ms');
    fail(new Error('late'));
    await Promise.resolve();
  });
});
