import { DeadlineExceeded, withDeadline } from './deadline';

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the work when it finishes first', async () => {
    await expect(withDeadline(Promise.resolve('ok'), 100)).resolves.toBe('ok');
    expect(jest.getTimerCount()).toBe(0);
  });

  it("passes the work's own failure on", async () => {
    await expect(withDeadline(Promise.reject(new Error('refused')), 100)).rejects.toThrow(
      'refused',
    );
  });

  it('rejects at the deadline when the work never answers, and a late failure stays handled', async () => {
    let fail: (e: Error) => void = () => undefined;
    const stalled = new Promise<string>((_, reject) => (fail = reject));
    const outcome = withDeadline(stalled, 2000);
    jest.advanceTimersByTime(1999);
    const early = await Promise.race([
      outcome.then(
        () => 'settled',
        () => 'settled',
      ),
      Promise.resolve('pending'),
    ]);
    expect(early).toBe('pending');
    jest.advanceTimersByTime(1);
    await expect(outcome).rejects.toBeInstanceOf(DeadlineExceeded);
    await expect(outcome).rejects.toThrow('No answer within 2000 ms');
    fail(new Error('late'));
    await Promise.resolve();
  });
});
