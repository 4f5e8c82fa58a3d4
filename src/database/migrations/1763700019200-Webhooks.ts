import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (issue #20): subscriptions (`webhooks`), the transactional outbox of events
 * (`webhook_events`, written in the transaction of the change that causes the event) and the
 * delivery log (`webhook_deliveries`, one row per attempt). No entities: only the webhooks module's
 * `WebhooksRepository` reads and writes them, in SQL.
 *
 * - `webhooks.secret_ciphertext`: the signing secret, AES-256-GCM (IV ‖ tag ‖ ciphertext) under a
 *   key derived from AUTH_SECRET, the subscription id as associated data.
 * - `webhook_events.body`: the standard JSON body exactly as signed and sent (text, not jsonb:
 *   jsonb would reorder its keys).
 * - `webhook_deliveries.next_attempt_at`: when a pending attempt is due, or when the retry of a
 *   failed one is scheduled (null: no retry).
 */
export class Webhooks1763700019200 implements MigrationInterface {
  name = 'Webhooks1763700019200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        url text NOT NULL,
        description text,
        events text[] NOT NULL,
        format text NOT NULL DEFAULT 'standard',
        active boolean NOT NULL DEFAULT true,
        disabled_reason text,
        consecutive_failures integer NOT NULL DEFAULT 0,
        secret_ciphertext bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_webhooks PRIMARY KEY (id),
        CONSTRAINT fk_webhooks_project FOREIGN KEY (project_id)
          REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT ck_webhooks_format CHECK (format IN ('standard', 'slack')),
        CONSTRAINT ck_webhooks_failures CHECK (consecutive_failures >= 0)
      )`);
    await q.query(`CREATE INDEX ix_webhooks_project ON webhooks (project_id, created_at, id)`);
    await q.query(`
      CREATE TABLE webhook_events (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        type text NOT NULL,
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_webhook_events PRIMARY KEY (id),
        CONSTRAINT fk_webhook_events_project FOREIGN KEY (project_id)
          REFERENCES projects(id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_webhook_events_project ON webhook_events (project_id)`);
    await q.query(`CREATE INDEX ix_webhook_events_created_at ON webhook_events (created_at)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        webhook_id uuid NOT NULL,
        event_id uuid NOT NULL,
        attempt integer NOT NULL,
        trigger text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        response_status integer,
        response_body text,
        duration_ms integer,
        error text,
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        CONSTRAINT pk_webhook_deliveries PRIMARY KEY (id),
        CONSTRAINT fk_webhook_deliveries_project FOREIGN KEY (project_id)
          REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_webhook_deliveries_webhook FOREIGN KEY (webhook_id)
          REFERENCES webhooks(id) ON DELETE CASCADE,
        CONSTRAINT fk_webhook_deliveries_event FOREIGN KEY (event_id)
          REFERENCES webhook_events(id) ON DELETE CASCADE,
        CONSTRAINT ck_webhook_deliveries_status CHECK (status IN ('pending', 'succeeded', 'failed')),
        CONSTRAINT ck_webhook_deliveries_trigger
          CHECK (trigger IN ('event', 'retry', 'redeliver', 'ping')),
        CONSTRAINT ck_webhook_deliveries_attempt CHECK (attempt >= 1)
      )`);
    await q.query(
      `CREATE INDEX ix_webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id)`,
    );
    await q.query(`CREATE INDEX ix_webhook_deliveries_event ON webhook_deliveries (event_id)`);
    await q.query(`CREATE INDEX ix_webhook_deliveries_project ON webhook_deliveries (project_id)`);
    await q.query(
      `CREATE INDEX ix_webhook_deliveries_created_at ON webhook_deliveries (created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_events`);
    await q.query(`DROP TABLE webhooks`);
  }
}
