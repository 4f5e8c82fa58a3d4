import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Db } from '../../common/persistence/db.service';
import type {
  WebhookDeliveryStatus,
  WebhookDeliveryTrigger,
  WebhookFormat,
} from './webhook-policy';

/** A subscription as the endpoints answer it (the secret is never read with it). */
export interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  events: string[];
  format: WebhookFormat;
  active: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}

/** One attempt of the delivery log, with its event's type. */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  trigger: WebhookDeliveryTrigger;
  status: WebhookDeliveryStatus;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

/** What the delivery worker needs to send one attempt. */
export interface SendableDelivery {
  id: string;
  project_id: string;
  webhook_id: string;
  event_id: string;
  attempt: number;
  trigger: WebhookDeliveryTrigger;
  status: WebhookDeliveryStatus;
  url: string;
  format: WebhookFormat;
  active: boolean;
  secret_ciphertext: Buffer;
  event_type: string;
  body: string;
}

export interface NewDelivery {
  id: string;
  projectId: string;
  webhookId: string;
  eventId: string;
  attempt: number;
  trigger: WebhookDeliveryTrigger;
  nextAttemptAt: Date;
}

export interface DeliveryOutcome {
  status: 'succeeded' | 'failed';
  responseStatus: number | null;
  responseBody: string | null;
  /** Null for an attempt the service could not complete (no measured send). */
  durationMs: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

export type WebhookPatch = Partial<{
  url: string;
  description: string | null;
  events: string[];
  format: WebhookFormat;
  active: boolean;
}>;

const WEBHOOK_COLUMNS = `id, project_id, url, description, events, format, active, disabled_reason,
  consecutive_failures, created_at, updated_at`;

const DELIVERY_SELECT = `SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.attempt, d.trigger,
       d.status, d.response_status, d.response_body, d.duration_ms, d.error, d.next_attempt_at,
       d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;

/**
 * SQL of the ids of a project's active subscriptions to an event type, in id order (`project`
 * and `type` are SQL expressions): what {@link WebhooksRepository.subscribersOf} reads, for a
 * writer that reads them in its own statement (`WebhookEvents.emitTo`).
 */
export function subscribersSql(project: string, type: string): string {
  return `SELECT id FROM webhooks WHERE project_id = ${project} AND active AND ${type} = ANY(events) ORDER BY id`;
}

/**
 * `webhooks`, `webhook_events` (the outbox) and `webhook_deliveries` (the log): the only SQL that
 * touches them. Methods taking `m` run on that transaction (the delivery worker's own, outside any
 * request); the others on the request's transaction or the pool ({@link Db}).
 */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: Db) {}

  private run<T>(m: EntityManager | undefined, sql: string, params: unknown[]): Promise<T[]> {
    return m ? (m.query(sql, params) as Promise<T[]>) : this.db.query<T>(sql, params);
  }

  // --- subscriptions ---------------------------------------------------------------------------

  /**
   * Serialises creations of subscriptions in one project (the per-project limit): a row lock on
   * the project that does not block inserts referencing it (FOR NO KEY UPDATE).
   */
  async lockProject(projectId: string): Promise<void> {
    await this.db.query(`SELECT id FROM projects WHERE id = $1 FOR NO KEY UPDATE`, [projectId]);
  }

  async countInProject(projectId: string): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhooks WHERE project_id = $1`,
      [projectId],
    );
    return rows[0]?.n ?? 0;
  }

  async insert(w: {
    id: string;
    projectId: string;
    url: string;
    description: string | null;
    events: string[];
    format: WebhookFormat;
    active: boolean;
    secretCiphertext: Buffer;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO webhooks (id, project_id, url, description, events, format, active, secret_ciphertext)
       VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8)`,
      [w.id, w.projectId, w.url, w.description, w.events, w.format, w.active, w.secretCiphertext],
    );
  }

  async findById(id: string): Promise<WebhookRow | null> {
    const rows = await this.db.query<WebhookRow>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * The subscription locked for this transaction (changes of one subscription serialise). `FOR NO
   * KEY UPDATE`: a transaction that recorded an event for it holds its row `FOR KEY SHARE` (the
   * foreign key of its delivery) until it commits, which `FOR UPDATE` would wait for (a DELETE
   * still does, when it deletes the row).
   */
  async findByIdForUpdate(id: string): Promise<WebhookRow | null> {
    const rows = await this.db.query<WebhookRow>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 FOR NO KEY UPDATE`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** A page of a project's subscriptions, oldest first, and the total. */
  async page(
    projectId: string,
    offset: number,
    limit: number,
  ): Promise<{ rows: WebhookRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db.query<WebhookRow>(
        `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE project_id = $1
          ORDER BY created_at, id LIMIT $2 OFFSET $3`,
        [projectId, limit, offset],
      ),
      this.countInProject(projectId),
    ]);
    return { rows, total: count };
  }

  /**
   * Applies a patch. Turning a subscription on again (`active: true`) clears its failure counter
   * and `disabled_reason`; turning it off clears nothing.
   */
  async update(id: string, patch: WebhookPatch): Promise<void> {
    const sets: string[] = ['updated_at = now()'];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.url !== undefined) set('url', patch.url);
    if (patch.description !== undefined) set('description', patch.description);
    if (patch.events !== undefined) set('events', patch.events, '::text[]');
    if (patch.format !== undefined) set('format', patch.format);
    if (patch.active !== undefined) {
      set('active', patch.active);
      if (patch.active) sets.push('consecutive_failures = 0', 'disabled_reason = NULL');
    }
    await this.db.query(`UPDATE webhooks SET ${sets.join(', ')} WHERE id = $1`, params);
  }

  async setSecret(id: string, secretCiphertext: Buffer): Promise<void> {
    await this.db.query(
      `UPDATE webhooks SET secret_ciphertext = $2, updated_at = now() WHERE id = $1`,
      [id, secretCiphertext],
    );
  }

  /** Deletes the subscription with its delivery log (cascade); pending jobs then find nothing. */
  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM webhooks WHERE id = $1`, [id]);
  }

  // --- the outbox --------------------------------------------------------------------------------

  /** The active subscriptions of a project that listen to `type`. */
  async subscribersOf(projectId: string, type: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(subscribersSql('$1', '$2'), [projectId, type]);
    return rows.map((r) => r.id);
  }

  async insertEvent(
    e: { id: string; projectId: string; type: string; body: string; createdAt: Date },
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_events (id, project_id, type, body, created_at) VALUES ($1, $2, $3, $4, $5)`,
      [e.id, e.projectId, e.type, e.body, e.createdAt],
    );
  }

  /** Inserts pending attempts (one statement). */
  async insertDeliveries(rows: readonly NewDelivery[], m?: EntityManager): Promise<void> {
    if (rows.length === 0) return;
    await this.run(
      m,
      `INSERT INTO webhook_deliveries (id, project_id, webhook_id, event_id, attempt, trigger, status, next_attempt_at)
       SELECT id, project_id, webhook_id, event_id, attempt, trigger, 'pending', next_attempt_at
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::int[], $6::text[], $7::timestamptz[])
           AS t(id, project_id, webhook_id, event_id, attempt, trigger, next_attempt_at)`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.projectId),
        rows.map((r) => r.webhookId),
        rows.map((r) => r.eventId),
        rows.map((r) => r.attempt),
        rows.map((r) => r.trigger),
        rows.map((r) => r.nextAttemptAt),
      ],
    );
  }

  /**
   * The next attempt number of an event for a subscription (1 for the first), and how many of its
   * attempts so far were automatic (the event's first and its retries). Numbers are unique
   * (`uq_webhook_deliveries_attempt`): call it holding the subscription's row lock
   * ({@link findByIdForUpdate}, {@link lockCounters}) and insert the attempt before that
   * transaction ends, so that two writers (a retry, a redelivery) take their numbers one after the
   * other.
   */
  async nextAttempt(
    webhookId: string,
    eventId: string,
    m?: EntityManager,
  ): Promise<{ attempt: number; automatic: number }> {
    const rows = await this.run<{ attempt: number; automatic: number }>(
      m,
      `SELECT coalesce(max(attempt), 0)::int + 1 AS attempt,
              count(*) FILTER (WHERE trigger IN ('event', 'retry'))::int AS automatic
         FROM webhook_deliveries
        WHERE webhook_id = $1 AND event_id = $2`,
      [webhookId, eventId],
    );
    return rows[0] ?? { attempt: 1, automatic: 0 };
  }

  // --- the delivery log -----------------------------------------------------------------------

  /** A page of a subscription's attempts, newest first, and the total. */
  async deliveriesPage(
    webhookId: string,
    offset: number,
    limit: number,
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db.query<DeliveryRow>(
        `${DELIVERY_SELECT} WHERE d.webhook_id = $1
          ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3`,
        [webhookId, limit, offset],
      ),
      this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`,
        [webhookId],
      ),
    ]);
    return { rows, total: count[0]?.n ?? 0 };
  }

  async findDelivery(webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const rows = await this.db.query<DeliveryRow>(
      `${DELIVERY_SELECT} WHERE d.webhook_id = $1 AND d.id = $2`,
      [webhookId, deliveryId],
    );
    return rows[0] ?? null;
  }

  // --- the delivery worker ----------------------------------------------------------------------

  /** An attempt with its subscription and event, or null when any of them is gone. */
  async findSendable(deliveryId: string): Promise<SendableDelivery | null> {
    const rows = await this.db.query<SendableDelivery>(
      `SELECT d.id, d.project_id, d.webhook_id, d.event_id, d.attempt, d.trigger, d.status,
              w.url, w.format, w.active, w.secret_ciphertext, e.type AS event_type, e.body
         FROM webhook_deliveries d
         JOIN webhooks w ON w.id = d.webhook_id
         JOIN webhook_events e ON e.id = d.event_id
        WHERE d.id = $1`,
      [deliveryId],
    );
    return rows[0] ?? null;
  }

  /**
   * Records the outcome of a pending attempt; false when it was not pending any more (recorded
   * already, or deleted): the caller then changes nothing else.
   */
  async completeDelivery(m: EntityManager, id: string, o: DeliveryOutcome): Promise<boolean> {
    const rows = await this.run<{ id: string }>(
      m,
      `WITH done AS (
         UPDATE webhook_deliveries
            SET status = $2, response_status = $3, response_body = $4, duration_ms = $5, error = $6,
                next_attempt_at = $7, completed_at = now()
          WHERE id = $1 AND status = 'pending'
          RETURNING id)
       SELECT id FROM done`,
      [id, o.status, o.responseStatus, o.responseBody, o.durationMs, o.error, o.nextAttemptAt],
    );
    return rows.length === 1;
  }

  /**
   * The subscription's failure counter and state, locked for this transaction: `FOR NO KEY
   * UPDATE`, which does not wait for transactions that recorded an event for the subscription
   * (they hold its row `FOR KEY SHARE` until they commit). With `FOR UPDATE`, one slow request
   * that had emitted an event held up recording every delivery attempt of the instance (found by
   * an audit: a ping in another project arrived 11.5 s late).
   */
  async lockCounters(
    m: EntityManager,
    webhookId: string,
  ): Promise<{ consecutive_failures: number; active: boolean } | null> {
    const rows = await this.run<{ consecutive_failures: number; active: boolean }>(
      m,
      `SELECT consecutive_failures, active FROM webhooks WHERE id = $1 FOR NO KEY UPDATE`,
      [webhookId],
    );
    return rows[0] ?? null;
  }

  async setCounters(
    m: EntityManager,
    webhookId: string,
    consecutiveFailures: number,
    disabledReason: string | null,
  ): Promise<void> {
    await this.run(
      m,
      disabledReason === null
        ? `UPDATE webhooks SET consecutive_failures = $2 WHERE id = $1`
        : `UPDATE webhooks SET consecutive_failures = $2, active = false, disabled_reason = $3,
                  updated_at = now()
            WHERE id = $1`,
      disabledReason === null
        ? [webhookId, consecutiveFailures]
        : [webhookId, consecutiveFailures, disabledReason],
    );
  }

  // --- retention ------------------------------------------------------------------------------

  /**
   * Deletes up to `batch` attempts older than `days` days, then up to `batch` events of that age
   * no attempt refers to any more; rows another instance is deleting are skipped. Returns how
   * many rows went.
   */
  async purgeOlderThan(days: number, batch: number): Promise<number> {
    const deliveries = await this.db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries
            WHERE created_at < now() - make_interval(days => $1)
            LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [days, batch],
    );
    const events = await this.db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e
            WHERE e.created_at < now() - make_interval(days => $1)
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
            LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [days, batch],
    );
    return (deliveries[0]?.n ?? 0) + (events[0]?.n ?? 0);
  }
}
