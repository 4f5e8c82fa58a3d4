import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery's attempt numbers are unique per subscription and event: automatic retries and
 * redeliveries both take the next number under the subscription's row lock
 * (`WebhooksRepository.nextAttempt`), and this index is the guarantee behind it (and serves that
 * lookup).
 *
 * Before, a redelivery made while an automatic retry was pending could share its number. Such
 * rows are kept and renumbered first: in each affected (subscription, event), its attempts in
 * their order (number, then time) count up from the group's lowest number, so an attempt keeps
 * its place and a later one never shows a smaller number. `down` drops the index; the numbers
 * stay as renumbered.
 */
export class WebhookAttemptsUnique1763700019960 implements MigrationInterface {
  name = 'WebhookAttemptsUnique1763700019960';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE webhook_deliveries d SET attempt = r.renumbered
        FROM (
          SELECT id,
                 min(attempt) OVER w - 1 + row_number() OVER (w ORDER BY attempt, created_at, id)
                   AS renumbered
            FROM webhook_deliveries
           WHERE (webhook_id, event_id) IN (
                   SELECT webhook_id, event_id FROM webhook_deliveries
                    GROUP BY webhook_id, event_id, attempt HAVING count(*) > 1)
          WINDOW w AS (PARTITION BY webhook_id, event_id)
        ) r
       WHERE d.id = r.id AND d.attempt <> r.renumbered`);
    await q.query(
      `CREATE UNIQUE INDEX uq_webhook_deliveries_attempt
         ON webhook_deliveries (webhook_id, event_id, attempt)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS uq_webhook_deliveries_attempt`);
  }
}
