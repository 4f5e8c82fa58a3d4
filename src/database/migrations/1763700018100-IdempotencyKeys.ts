import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored responses of requests sent with an `Idempotency-Key` (issue #18 §1), written in the same
 * transaction as the request's effect. Keyed by the scope of a key: the principal (the user; an API
 * key acts as its user), the method, the path and the key. `headers` holds the response headers
 * to give back (Content-Type, Location), `body` the response bytes as sent. Rows past `expires_at`
 * are ignored and purged in batches by `ix_idempotency_keys_expires_at`. No entity: only
 * `IdempotencyRepository` (src/common/idempotency) reads and writes it, in SQL.
 */
export class IdempotencyKeys1763700018100 implements MigrationInterface {
  name = 'IdempotencyKeys1763700018100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        principal_id uuid NOT NULL,
        method varchar(16) NOT NULL,
        path text NOT NULL,
        key varchar(255) NOT NULL,
        fingerprint char(64) NOT NULL,
        status smallint NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}',
        body bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CONSTRAINT pk_idempotency_keys PRIMARY KEY (principal_id, method, path, key),
        CONSTRAINT fk_idempotency_keys_principal FOREIGN KEY (principal_id)
          REFERENCES users(id) ON DELETE CASCADE,
        CONSTRAINT ck_idempotency_keys_status CHECK (status BETWEEN 100 AND 499)
      )`);
    await q.query(`CREATE INDEX ix_idempotency_keys_expires_at ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
