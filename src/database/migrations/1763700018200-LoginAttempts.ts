import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed logins counted per username and per client address (issue #24 §2), shared by every
 * instance of the service. One row per (scope, key): `scope` is `user` (key: the lower-cased
 * username, whether or not such a user exists) or `ip` (key: the client address). `failures` counts
 * the failures since `window_start`; `blocked_until` is the end of the current lockout; the row is
 * forgotten at `expires_at` (LOGIN_WINDOW_SECONDS after the first failure, or after the end of the
 * last lockout) and purged in small batches by `ix_login_attempts_expires_at`. No entity: only
 * `LoginAttemptsRepository` (src/modules/users) reads and writes it, in SQL.
 */
export class LoginAttempts1763700018200 implements MigrationInterface {
  name = 'LoginAttempts1763700018200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE login_attempts (
        scope text NOT NULL,
        key text NOT NULL,
        window_start timestamptz NOT NULL,
        failures integer NOT NULL,
        blocked_until timestamptz,
        expires_at timestamptz NOT NULL,
        CONSTRAINT pk_login_attempts PRIMARY KEY (scope, key),
        CONSTRAINT ck_login_attempts_scope CHECK (scope IN ('user', 'ip')),
        CONSTRAINT ck_login_attempts_failures CHECK (failures > 0)
      )`);
    await q.query(`CREATE INDEX ix_login_attempts_expires_at ON login_attempts (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE login_attempts`);
  }
}
