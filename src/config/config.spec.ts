import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_AUTH_SECRET } from '../../test/support/constants';
import { bodyProblem } from '../../test/support/validation';
import { CreateUserDto, LoginDto } from '../modules/users/dto/user.dto';
import {
  adminUsernameProblem,
  authSecretProblem,
  ConfigError,
  databaseUrlProblem,
  EXAMPLE_AUTH_SECRETS,
  loadConfig,
} from './config';

const secret = 'x'.repeat(40);

describe('loadConfig', () => {
  it('applies the CONTRACT §1 defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    const c = loadConfig({ DATA_DIR: dir });
    expect(c).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: null,
      embeddedPgPort: 5433,
      accessTokenTtlSeconds: 28800,
      adminUsername: 'admin',
      adminPassword: null,
      errorBaseUrl: 'https://tms.local/errors',
      maxUploadBytes: 67108864,
      maxJsonBytes: 5242880,
      logLevel: 'info',
      corsOrigins: [],
      dbPreparedStatements: true,
    });
    expect(c.authSecret.length).toBeGreaterThanOrEqual(32);
  });

  it('generates AUTH_SECRET once and keeps it in DATA_DIR', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    const a = loadConfig({ DATA_DIR: dir }).authSecret;
    const b = loadConfig({ DATA_DIR: dir }).authSecret;
    expect(a).toBe(b);
    expect(readFileSync(join(dir, 'auth-secret'), 'utf8').trim()).toBe(a);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ DATABASE_URL: 'postgres://u@h/db' }, /AUTH_SECRET is required/],
    [{ LOG_LEVEL: 'loud', AUTH_SECRET: secret }, /LOG_LEVEL/],
    [{ MAX_UPLOAD_BYTES: '-1', AUTH_SECRET: secret }, /MAX_UPLOAD_BYTES/],
    [{ MAX_JSON_BYTES: '1.5', AUTH_SECRET: secret }, /MAX_JSON_BYTES/],
    [{ ACCESS_TOKEN_TTL_SECONDS: '0', AUTH_SECRET: secret }, /ACCESS_TOKEN_TTL_SECONDS/],
    [{ ADMIN_USERNAME: 'ab', AUTH_SECRET: secret }, /ADMIN_USERNAME/],
    [{ HOST: '', PORT: '-1', AUTH_SECRET: secret }, /PORT/],
    [{ ERROR_BASE_URL: 'nope', AUTH_SECRET: secret }, /ERROR_BASE_URL/],
    [{ ERROR_BASE_URL: 'https://x y', AUTH_SECRET: secret }, /ERROR_BASE_URL/],
    [{ CORS_ORIGINS: 'not an origin', AUTH_SECRET: secret }, /CORS_ORIGINS/],
    [{ EMBEDDED_PG_PORT: '0', AUTH_SECRET: secret }, /EMBEDDED_PG_PORT/],
    [{ DB_PREPARED_STATEMENTS: 'no', AUTH_SECRET: secret }, /DB_PREPARED_STATEMENTS/],
    [{ DB_POOL_SIZE: 'abc', AUTH_SECRET: secret }, /DB_POOL_SIZE/],
    [{ DB_POOL_SIZE: '0', AUTH_SECRET: secret }, /DB_POOL_SIZE/],
    [{ EXPORT_CONCURRENCY: '0', AUTH_SECRET: secret }, /EXPORT_CONCURRENCY/],
    [{ EXPORT_CONCURRENCY: '2.5', AUTH_SECRET: secret }, /EXPORT_CONCURRENCY/],
    [{ DB_STATEMENT_TIMEOUT_MS: '99', AUTH_SECRET: secret }, /DB_STATEMENT_TIMEOUT_MS/],
    [{ DB_STATEMENT_TIMEOUT_MS: '30s', AUTH_SECRET: secret }, /DB_STATEMENT_TIMEOUT_MS/],
    [{ DB_QUERY_TIMEOUT_MS: '0', AUTH_SECRET: secret }, /DB_QUERY_TIMEOUT_MS/],
    [{ DB_QUERY_TIMEOUT_MS: '1000', AUTH_SECRET: secret }, /DB_QUERY_TIMEOUT_MS \(1000\) must be at least DB_STATEMENT_TIMEOUT_MS \(30000\)/],
    [{ DB_STATEMENT_TIMEOUT_MS: '5000', DB_QUERY_TIMEOUT_MS: '4999', AUTH_SECRET: secret }, /DB_QUERY_TIMEOUT_MS/],
    [{ DB_CONNECT_TIMEOUT_MS: '-5', AUTH_SECRET: secret }, /DB_CONNECT_TIMEOUT_MS/],
    [{ DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: 'never', AUTH_SECRET: secret }, /DB_IDLE_IN_TRANSACTION_TIMEOUT_MS/],
    [{ READINESS_TIMEOUT_MS: '60001', AUTH_SECRET: secret }, /READINESS_TIMEOUT_MS/],
    [{ READINESS_TIMEOUT_MS: '50', AUTH_SECRET: secret }, /READINESS_TIMEOUT_MS/],
    [{ COMPONENT_GRAPH_CACHE_BYTES: '-1', AUTH_SECRET: secret }, /COMPONENT_GRAPH_CACHE_BYTES/],
    [{ COMPONENT_GRAPH_CACHE_BYTES: '64MB', AUTH_SECRET: secret }, /COMPONENT_GRAPH_CACHE_BYTES/],
    [{ COMPONENT_GRAPH_CACHE_BYTES: '17179869185', AUTH_SECRET: secret }, /COMPONENT_GRAPH_CACHE_BYTES/],
    [{ IDEMPOTENCY_TTL_HOURS: '0', AUTH_SECRET: secret }, /IDEMPOTENCY_TTL_HOURS/],
    [{ IDEMPOTENCY_TTL_HOURS: '721', AUTH_SECRET: secret }, /IDEMPOTENCY_TTL_HOURS/],
    [{ IDEMPOTENCY_TTL_HOURS: '24h', AUTH_SECRET: secret }, /IDEMPOTENCY_TTL_HOURS/],
    [{ HOST: 'not a host', AUTH_SECRET: secret }, /HOST/],
    [{ HOST: 'http://example.com', AUTH_SECRET: secret }, /HOST/],
    // These passed validation and stopped the start later with a stack (found by an audit).
    [{ HOST: '999.999.999.999', AUTH_SECRET: secret }, /HOST/],
    [{ HOST: '::::', AUTH_SECRET: secret }, /HOST/],
    [{ METRICS_PORT: '9464', METRICS_HOST: '256.1.1.1', AUTH_SECRET: secret }, /METRICS_HOST/],
    [{ PORT: '8080', METRICS_PORT: '8080', AUTH_SECRET: secret }, /METRICS_PORT must differ from PORT \(8080\)/],
    [{ PORT: '8080', HOST: '10.0.0.1', METRICS_PORT: '8080', METRICS_HOST: '0.0.0.0', AUTH_SECRET: secret }, /METRICS_PORT/],
    [{ DATABASE_URL: 'postgres://user:s3cretpw@host:notaport/db', AUTH_SECRET: secret }, /^DATABASE_URL is not a valid URL/],
    [{ DATABASE_URL: 'postgres://user:s3cretpw@host:99999/db', AUTH_SECRET: secret }, /^DATABASE_URL is not a valid URL/],
    [{ DATABASE_URL: 'postgres://', AUTH_SECRET: secret }, /^DATABASE_URL names no host/],
  ])('rejects %j naming the variable', (env, message) => {
    expect(() => loadConfig(env, { persistSecret: false })).toThrow(ConfigError);
    expect(() => loadConfig(env, { persistSecret: false })).toThrow(message);
  });

  it('accepts an external database with a secret and parses lists', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgresql://u:p@db:5432/tms',
      AUTH_SECRET: secret,
      CORS_ORIGINS: 'https://a.example.com, http://localhost:5173',
      LOG_LEVEL: 'WARN',
      ERROR_BASE_URL: 'https://errors.example.com/',
      DB_PREPARED_STATEMENTS: 'FALSE',
    });
    expect(c.dbPreparedStatements).toBe(false);
    expect(c.dbPoolSize).toBe(20);
    expect(loadConfig({ DB_POOL_SIZE: '5', AUTH_SECRET: secret }).dbPoolSize).toBe(5);
    // Report downloads: a quarter of the pool by default, at least one.
    expect(c.exportConcurrency).toBe(5);
    expect(loadConfig({ DB_POOL_SIZE: '3', AUTH_SECRET: secret }).exportConcurrency).toBe(1);
    expect(loadConfig({ DB_POOL_SIZE: '9', AUTH_SECRET: secret }).exportConcurrency).toBe(2);
    expect(loadConfig({ EXPORT_CONCURRENCY: '7', AUTH_SECRET: secret }).exportConcurrency).toBe(7);
    for (const host of ['127.0.0.1', '::', '[::1]', 'localhost', 'api.example.com', 'fe80::1%eth0', 'db-1']) {
      expect(loadConfig({ HOST: host, AUTH_SECRET: secret }).host).toBe(host);
    }
    // The same port on two distinct addresses is fine; the URL's password is never in a message.
    expect(
      loadConfig({ AUTH_SECRET: secret, HOST: '10.0.0.1', PORT: '8080', METRICS_PORT: '8080', METRICS_HOST: '127.0.0.1' })
        .metricsPort,
    ).toBe(8080);
    expect(() => loadConfig({ AUTH_SECRET: secret, DATABASE_URL: 'postgres://u:s3cretpw@h:notaport/db' })).not.toThrow(
      /s3cretpw/,
    );
    expect(c.databaseUrl).toBe('postgresql://u:p@db:5432/tms');
    expect(c.corsOrigins).toEqual(['https://a.example.com', 'http://localhost:5173']);
    expect(c.logLevel).toBe('warn');
    expect(c.errorBaseUrl).toBe('https://errors.example.com');
  });

  it('gives every database connection deadlines (issue #22), configurable', () => {
    expect(loadConfig({ AUTH_SECRET: secret })).toMatchObject({
      db: { statementTimeoutMs: 30_000, queryTimeoutMs: 32_000, readTimeoutMs: 5_000, connectTimeoutMs: 5_000, idleInTransactionTimeoutMs: 60_000 },
      readinessTimeoutMs: 2_000,
    });
    // The client-side deadline follows a longer statement deadline unless it is set itself.
    expect(loadConfig({ AUTH_SECRET: secret, DB_STATEMENT_TIMEOUT_MS: '120000' }).db.queryTimeoutMs).toBe(122_000);
    const c = loadConfig({
      AUTH_SECRET: secret,
      DB_STATEMENT_TIMEOUT_MS: '800',
      DB_QUERY_TIMEOUT_MS: '800',
      DB_CONNECT_TIMEOUT_MS: '700',
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1500',
      READINESS_TIMEOUT_MS: '300',
    });
    // The read deadline defaults to 5 s, but never beyond the query deadline.
    expect(c.db).toEqual({ statementTimeoutMs: 800, queryTimeoutMs: 800, readTimeoutMs: 800, connectTimeoutMs: 700, idleInTransactionTimeoutMs: 1500 });
    expect(c.readinessTimeoutMs).toBe(300);
  });

  it('bounds the component graph cache by COMPONENT_GRAPH_CACHE_BYTES (64 MiB; 0 turns it off)', () => {
    expect(loadConfig({ AUTH_SECRET: secret }).componentGraphCacheBytes).toBe(67_108_864);
    expect(loadConfig({ AUTH_SECRET: secret, COMPONENT_GRAPH_CACHE_BYTES: '0' }).componentGraphCacheBytes).toBe(0);
    expect(loadConfig({ AUTH_SECRET: secret, COMPONENT_GRAPH_CACHE_BYTES: '1048576' }).componentGraphCacheBytes).toBe(1_048_576);
  });

  it('bounds the run snapshot cache by SNAPSHOT_CACHE_BYTES (64 MiB; 0 turns it off; 0..16 GiB)', () => {
    expect(loadConfig({ AUTH_SECRET: secret }).snapshotCacheBytes).toBe(67_108_864);
    expect(loadConfig({ AUTH_SECRET: secret, SNAPSHOT_CACHE_BYTES: '0' }).snapshotCacheBytes).toBe(0);
    expect(loadConfig({ AUTH_SECRET: secret, SNAPSHOT_CACHE_BYTES: '1048576' }).snapshotCacheBytes).toBe(1_048_576);
    for (const bad of ['-1', '1.5', 'lots', String(16 * 1024 ** 3 + 1)]) {
      expect(() => loadConfig({ AUTH_SECRET: secret, SNAPSHOT_CACHE_BYTES: bad })).toThrow(ConfigError);
    }
  });

  it('keeps idempotent responses for IDEMPOTENCY_TTL_HOURS (24 by default, 1 to 720)', () => {
    expect(loadConfig({ AUTH_SECRET: secret }).idempotencyTtlHours).toBe(24);
    expect(loadConfig({ AUTH_SECRET: secret, IDEMPOTENCY_TTL_HOURS: '1' }).idempotencyTtlHours).toBe(1);
    expect(loadConfig({ AUTH_SECRET: secret, IDEMPOTENCY_TTL_HOURS: '720' }).idempotencyTtlHours).toBe(720);
  });

  it('takes DB_READ_TIMEOUT_MS up to the query deadline, and refuses a longer one', () => {
    expect(loadConfig({ AUTH_SECRET: secret, DB_READ_TIMEOUT_MS: '1500' }).db.readTimeoutMs).toBe(1500);
    expect(() => loadConfig({ AUTH_SECRET: secret, DB_READ_TIMEOUT_MS: '40000' })).toThrow(
      /DB_READ_TIMEOUT_MS \(40000\) must not exceed DB_QUERY_TIMEOUT_MS \(32000\)/,
    );
  });

  it('accepts short passwords and tiny limits an operator chose, with warnings', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@h/db',
      AUTH_SECRET: secret,
      ADMIN_PASSWORD: 'admin',
      ACCESS_TOKEN_TTL_SECONDS: '1',
      MAX_JSON_BYTES: '10',
      MAX_UPLOAD_BYTES: '10',
      ERROR_BASE_URL: 'urn:tms:errors',
      CORS_ORIGINS: 'http://localhost:5173/,*',
    });
    expect(c).toMatchObject({
      authSecret: secret,
      adminPassword: 'admin',
      accessTokenTtlSeconds: 1,
      maxJsonBytes: 10,
      maxUploadBytes: 10,
      errorBaseUrl: 'urn:tms:errors',
      corsOrigins: ['http://localhost:5173', '*'],
    });
    expect(c.warnings.join(' ')).toMatch(/ADMIN_PASSWORD/);
  });

  describe('AUTH_SECRET (issue #24)', () => {
    it.each([
      ['x'.repeat(31), /at least 32 bytes long, got 31/],
      ['secret', /at least 32 bytes long, got 6/],
      // Bytes, not characters: 16 two-byte characters are 32 bytes, 15 are 30.
      ['é'.repeat(15), /got 30/],
      ...EXAMPLE_AUTH_SECRETS.map((s) => [s, /example value/] as [string, RegExp]),
    ])('refuses %j', (value, message) => {
      expect(() => loadConfig({ AUTH_SECRET: value }, { persistSecret: false })).toThrow(ConfigError);
      expect(() => loadConfig({ AUTH_SECRET: value }, { persistSecret: false })).toThrow(message);
      expect(authSecretProblem(value)).not.toBeNull();
    });

    it.each(['x'.repeat(32), 'é'.repeat(16), TEST_AUTH_SECRET])('accepts %j', (value) => {
      expect(loadConfig({ AUTH_SECRET: value }).authSecret).toBe(value);
    });

    it('replaces a persisted secret that would be refused', () => {
      const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
      writeFileSync(join(dir, 'auth-secret'), `${EXAMPLE_AUTH_SECRETS[0]}\n`);
      const generated = loadConfig({ DATA_DIR: dir }).authSecret;
      expect(authSecretProblem(generated)).toBeNull();
      expect(generated).not.toBe(EXAMPLE_AUTH_SECRETS[0]);
    });
  });

  describe('*_FILE variants (issue #24)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-files-'));
    const file = (name: string, content: string) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    };

    it('reads AUTH_SECRET_FILE, ADMIN_PASSWORD_FILE and DATABASE_URL_FILE, dropping one trailing newline', () => {
      const c = loadConfig({
        AUTH_SECRET_FILE: file('secret', `${'s'.repeat(40)}\n`),
        ADMIN_PASSWORD_FILE: file('password', 'pass word  \n\n'),
        DATABASE_URL_FILE: file('url', 'postgres://u:p@db:5432/tms\r\n'),
      });
      expect(c.authSecret).toBe('s'.repeat(40));
      // Only one newline is removed; the rest of a password is kept as written.
      expect(c.adminPassword).toBe('pass word  \n');
      expect(c.databaseUrl).toBe('postgres://u:p@db:5432/tms');
    });

    it('validates the content like the variable itself', () => {
      expect(() => loadConfig({ AUTH_SECRET_FILE: file('short', 'short\n') })).toThrow(/at least 32 bytes/);
      expect(() =>
        loadConfig({ AUTH_SECRET: secret, DATABASE_URL_FILE: file('bad-url', 'mysql://x\n') }),
      ).toThrow(/DATABASE_URL must be a postgres/);
    });

    it.each(['AUTH_SECRET', 'ADMIN_PASSWORD', 'DATABASE_URL'])('refuses both %s and %s_FILE', (name) => {
      const env = { AUTH_SECRET: secret, [name]: name === 'DATABASE_URL' ? 'postgres://u@h/db' : 'v'.repeat(40), [`${name}_FILE`]: file(`both-${name}`, 'w'.repeat(40)) };
      expect(() => loadConfig(env)).toThrow(new ConfigError(`Set either ${name} or ${name}_FILE, not both`));
    });

    it('names the variable, never the content, when the file cannot be read', () => {
      expect(() => loadConfig({ AUTH_SECRET: secret, ADMIN_PASSWORD_FILE: join(dir, 'missing') })).toThrow(
        new ConfigError(`ADMIN_PASSWORD_FILE: cannot read the file ${join(dir, 'missing')} (ENOENT)`),
      );
      // A directory is not readable as a file.
      expect(() => loadConfig({ AUTH_SECRET: secret, DATABASE_URL_FILE: dir })).toThrow(/^DATABASE_URL_FILE: cannot read the file .* \(EISDIR\)$/);
    });
  });

  describe('the bootstrap administrator meets the rules of the users API (audit)', () => {
    const load = (env: Record<string, string>) =>
      loadConfig({ AUTH_SECRET: secret, ...env }, { persistSecret: false });

    it('refuses an ADMIN_PASSWORD longer than the login accepts, naming the variable, never the value', () => {
      const password = 'p'.repeat(257);
      expect(() => load({ ADMIN_PASSWORD: password })).toThrow(ConfigError);
      expect(() => load({ ADMIN_PASSWORD: password })).toThrow(
        /^ADMIN_PASSWORD must be at most 256 characters long .*, got 257$/,
      );
      expect(() => load({ ADMIN_PASSWORD: password })).not.toThrow(/ppp/);
      // Counted in characters (code points) like the login's MaxLen: 256 emoji are 512 UTF-16 units.
      expect(load({ ADMIN_PASSWORD: '😀'.repeat(256) }).adminPassword).toBe('😀'.repeat(256));
      expect(() => load({ ADMIN_PASSWORD: '😀'.repeat(257) })).toThrow(/ADMIN_PASSWORD/);
      expect(load({ ADMIN_PASSWORD: 'p'.repeat(256) }).adminPassword).toBe('p'.repeat(256));
    });

    it('refuses ADMIN_PASSWORD_FILE content that is too long the same way', () => {
      const dir = mkdtempSync(join(tmpdir(), 'cfg-admin-'));
      const path = join(dir, 'password');
      writeFileSync(path, `${'p'.repeat(300)}\n`);
      expect(() => load({ ADMIN_PASSWORD_FILE: path })).toThrow(
        /^ADMIN_PASSWORD must be at most 256/,
      );
    });

    it.each([
      ['ab', /^ADMIN_USERNAME must be 3 to 64 characters long, got 2$/],
      ['a'.repeat(65), /^ADMIN_USERNAME must be 3 to 64 characters long, got 65$/],
      ['ad\tmin', /^ADMIN_USERNAME must not contain control characters/],
      ['ad\nmin', /^ADMIN_USERNAME must not contain control characters/],
      ['ad\u200bmin', /^ADMIN_USERNAME must not contain control characters/],
      ['ad\u2028min', /^ADMIN_USERNAME must not contain control characters/],
      ['ad\ud800min', /^ADMIN_USERNAME must not contain control characters/],
    ])('refuses ADMIN_USERNAME %j', (username, message) => {
      expect(() => load({ ADMIN_USERNAME: username })).toThrow(ConfigError);
      expect(() => load({ ADMIN_USERNAME: username })).toThrow(message);
    });

    it.each(['admin', 'root admin', 'Zoë', '管理者', '😀😀😀', 'a'.repeat(64), '😀'.repeat(64)])(
      'accepts ADMIN_USERNAME %j',
      (username) => {
        expect(load({ ADMIN_USERNAME: username }).adminUsername).toBe(username);
      },
    );

    it('agrees with CreateUserDto and LoginDto on every name and password it judges', () => {
      const names = [
        'ab',
        'abc',
        'a'.repeat(64),
        'a'.repeat(65),
        '😀'.repeat(64),
        'ad\tmin',
        'ad\u200bmin',
        'Zoë',
      ];
      for (const username of names) {
        const dtoAccepts =
          bodyProblem(CreateUserDto, { username, password: 'a long passphrase' }) === null &&
          bodyProblem(LoginDto, { username, password: 'a long passphrase' }) === null;
        expect([username, adminUsernameProblem(username) === null]).toEqual([username, dtoAccepts]);
      }
      for (const password of [
        'p'.repeat(256),
        'p'.repeat(257),
        '😀'.repeat(256),
        '😀'.repeat(257),
      ]) {
        let configAccepts = true;
        try {
          load({ ADMIN_PASSWORD: password });
        } catch {
          configAccepts = false;
        }
        const loginAccepts = bodyProblem(LoginDto, { username: 'admin', password }) === null;
        expect([password.length, configAccepts]).toEqual([password.length, loginAccepts]);
      }
    });
  });

  describe('DATABASE_URL percent-escapes (audit)', () => {
    it.each([
      'postgres://tms:abc%zzTOPSECRET@host/db',
      'postgres://tms:TOPSECRET%@host/db',
      'postgres://tm%zz:TOPSECRET@host/db',
      'postgres://tms:TOPSECRET@host/d%zzb',
      'postgres://tms:TOPSECRET@host/db%e9',
      'postgres://tms:TOPSECRET@h%zzost/db',
    ])('refuses %s as not a valid URL, without the password', (url) => {
      expect(databaseUrlProblem(url)).toMatch(/^is not a valid URL \(.*percent-encoded\)$/);
      expect(() => load(url)).toThrow(ConfigError);
      expect(() => load(url)).toThrow(/^DATABASE_URL is not a valid URL/);
      expect(() => load(url)).not.toThrow(/SECRET/);
    });

    it.each([
      'postgres://tms:abc%25zz@host/db',
      'postgres://tms:p%40ss%3Aw%2Frd@host:5432/tms',
      'postgres://t%C3%A9:%F0%9F%98%80@host/d%C3%A9',
      'postgresql://u@%2Fvar%2Frun%2Fpostgresql/db',
    ])('accepts %s', (url) => {
      expect(databaseUrlProblem(url)).toBeNull();
      expect(load(url).databaseUrl).toBe(url);
    });

    function load(url: string) {
      return loadConfig({ AUTH_SECRET: secret, DATABASE_URL: url }, { persistSecret: false });
    }
  });

  describe('METRICS_PORT / METRICS_HOST (issue #24)', () => {
    it('is off by default and binds to 127.0.0.1 when set', () => {
      expect(loadConfig({ AUTH_SECRET: secret })).toMatchObject({ metricsPort: null, metricsHost: '127.0.0.1' });
      expect(loadConfig({ AUTH_SECRET: secret, METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' });
      expect(loadConfig({ AUTH_SECRET: secret, METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 0, metricsHost: '0.0.0.0' });
    });

    it.each([
      [{ METRICS_PORT: 'on' }, /METRICS_PORT/],
      [{ METRICS_PORT: '65536' }, /METRICS_PORT/],
      [{ METRICS_PORT: '9464', METRICS_HOST: 'http://x' }, /METRICS_HOST/],
    ])('refuses %j', (env, message) => {
      expect(() => loadConfig({ AUTH_SECRET: secret, ...env })).toThrow(message);
    });
  });
});
