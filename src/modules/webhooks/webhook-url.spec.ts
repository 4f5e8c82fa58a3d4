import { DestinationRefused, parseWebhookUrl, resolveAllowed, type Resolver } from './webhook-url';

const resolver =
  (table: Record<string, string[]>): Resolver =>
  (host) => {
    const addresses = table[host];
    if (!addresses) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 })));
  };

describe('parseWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/x', 'hooks.example.com'],
    ['http://hooks.example.com:8080/x?y=1', 'hooks.example.com'],
    ['http://[::1]:80/', '::1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    [`https://example.com/${'é'.repeat(337)}`, 'example.com'], // 2,042 characters normalised
  ])('accepts %s (host %s)', (raw, host) => {
    const target = parseWebhookUrl(raw);
    expect('problem' in target).toBe(false);
    if (!('problem' in target)) expect(target.host).toBe(host);
  });

  it.each([
    ['ftp://example.com/', 'http:// or https://'],
    ['file:///etc/passwd', 'http:// or https://'],
    ['javascript:alert(1)', 'http:// or https://'],
    ['example.com/hook', 'absolute'],
    ['https://user:pass@example.com/', 'credentials'],
    [`https://example.com/${'a'.repeat(2100)}`, 'at most 2048'],
    // 1,020 characters sent, 6,020 stored (each é is %C3%A9): it could never be delivered.
    [`https://example.com/${'é'.repeat(1000)}`, 'once normalised'],
  ])('refuses %s', (raw, reason) => {
    const target = parseWebhookUrl(raw);
    expect('problem' in target && target.problem).toContain(reason);
  });
});

describe('resolveAllowed', () => {
  const dns = resolver({
    'public.example': ['93.184.216.34'],
    'loop.example': ['127.0.0.1'],
    'mixed.example': ['93.184.216.34', '10.0.0.5'],
    'v6loop.example': ['::1'],
  });
  const timeoutMs = 10_000;

  it('answers the addresses of a public host', async () => {
    await expect(resolveAllowed('public.example', false, { resolver: dns, timeoutMs })).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
    ]);
  });

  it.each(['loop.example', 'mixed.example', 'v6loop.example', '127.0.0.1', '::1', '::ffff:127.0.0.1'])(
    'refuses %s unless private destinations are allowed',
    async (host) => {
      await expect(resolveAllowed(host, false, { resolver: dns, timeoutMs })).rejects.toThrow(DestinationRefused);
      await expect(resolveAllowed(host, true, { resolver: dns, timeoutMs })).resolves.not.toHaveLength(0);
    },
  );

  it('refuses a host that does not resolve, even when private destinations are allowed', async () => {
    await expect(resolveAllowed('nowhere.example', true, { resolver: dns, timeoutMs })).rejects.toThrow(/does not resolve/);
  });

  describe('with a resolver that never answers', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());
    const hanging: Resolver = () => new Promise(() => undefined);

    it('refuses the host once the deadline has passed, not before', async () => {
      const outcome = resolveAllowed('slow.example', true, { resolver: hanging, timeoutMs });
      const settled = jest.fn();
      outcome.then(settled, settled);
      await jest.advanceTimersByTimeAsync(timeoutMs - 1);
      expect(settled).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      await expect(outcome).rejects.toThrow(DestinationRefused);
      await expect(outcome).rejects.toThrow(
        `the host slow.example does not resolve (no answer within ${timeoutMs} ms)`,
      );
    });

    it('leaves no timer behind when the resolver answers in time', async () => {
      await expect(resolveAllowed('public.example', false, { resolver: dns, timeoutMs })).resolves.toHaveLength(1);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
