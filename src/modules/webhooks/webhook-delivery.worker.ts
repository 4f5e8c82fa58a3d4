import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { JobQueue, QueuedJob } from '../../common/jobs/job-queue.service';
import { Db } from '../../common/persistence/db.service';
import { uuidv7 } from '../../common/persistence/ids';
import { slackMessage, type WebhookEventBody } from './slack-format';
import { DeliveryJob, WEBHOOK_DELIVERY_QUEUE } from './webhook-events.service';
import {
  afterAttempt,
  DISABLED_AFTER_FAILURES_REASON,
  isAutomatic,
  isDeliverySuccess,
  retryDelaySeconds,
  shouldRetry,
  WEBHOOK_RESPONSE_BODY_BYTES,
  WEBHOOK_TIMEOUT_MS,
} from './webhook-policy';
import { decryptSecret, secretEncryptionKey, signWebhook } from './webhook-secret';
import { sendWebhook, type SendResult } from './webhook-sender';
import { SendableDelivery, WebhooksRepository } from './webhooks.repository';

/** Attempts one instance sends side by side (a slow receiver holds one of them up to 10 s). */
export const WEBHOOK_DELIVERY_BATCH = 10;

/** User-Agent of every delivery. */
export const WEBHOOK_USER_AGENT = 'tms-webhooks/1';

/**
 * Retries of a delivery job by the job queue after it failed inside the service (the database, a
 * bug: not the receiver, whose failures are recorded as attempts). The last try, and the
 * dead-letter job after it, end the attempt `failed`.
 */
export const WEBHOOK_JOB_RETRY_LIMIT = 3;

/** `error` of an attempt whose job failed on every try (the cause is in the service's log). */
export const NOT_COMPLETED_FAILED =
  'not completed: an internal error of the service stopped this attempt on every try (its log ' +
  "names this attempt's id); the receiver may have received it";

/** `error` of an attempt whose job failed for good before anything recorded its outcome. */
export const NOT_COMPLETED_ABANDONED =
  'not completed: the delivery job stopped before the outcome was recorded (its worker stopped, ' +
  'or the database failed on every try); the receiver may have received it';

/**
 * How an attempt ended: sent (the receiver's answer, or why none arrived), or given up by the
 * service (`notCompleted`: the reason recorded in `error`).
 */
type Ending = { sent: SendResult } | { notCompleted: string };

/**
 * Runs delivery jobs on any instance (the job queue hands each job to one worker at a time). One
 * job is one attempt, identified by its delivery row: an attempt that is no longer pending was
 * recorded already and is not sent again. The outcome, the subscription's failure counter and the
 * next attempt (its row, numbered under the subscription's row lock, and its job) are written in
 * one transaction.
 *
 * A job that fails inside the service (not the receiver) is retried by the queue
 * ({@link WEBHOOK_JOB_RETRY_LIMIT} times); its last try, or else the dead-letter job (a worker that
 * died, a database down through every try), records the attempt `failed` with the reason in
 * `error`. Such an attempt is retried like any failed one (while automatic attempts remain) but
 * does not count towards disabling the subscription: the receiver did nothing wrong.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnModuleInit {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly key: Buffer;

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly jobs: JobQueue,
    private readonly db: Db,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.key = secretEncryptionKey(config.authSecret);
  }

  onModuleInit(): void {
    this.jobs.register<DeliveryJob>(
      WEBHOOK_DELIVERY_QUEUE,
      {
        // A handler failure (the database, not the receiver: its failures are recorded) is retried
        // a few times by the queue; the receiver's retries are new attempts scheduled below.
        retryLimit: WEBHOOK_JOB_RETRY_LIMIT,
        retryDelaySeconds: 5,
        retryBackoff: true,
        // Well above one attempt (10 s) plus its writes: a job of a dead instance is run again.
        expireInSeconds: 120,
        batchSize: WEBHOOK_DELIVERY_BATCH,
      },
      (job) => this.handle(job),
      (job) => this.abandoned(job),
    );
  }

  /** One try of a delivery job; its last try records a failure of its own as the attempt's end. */
  async handle(job: QueuedJob<DeliveryJob>): Promise<void> {
    try {
      await this.deliver(job.data.delivery_id);
    } catch (error) {
      if (job.retryCount < WEBHOOK_JOB_RETRY_LIMIT) throw error;
      this.logger.error(
        `webhook delivery ${job.data.delivery_id} failed on every try: ${errorMessage(error)}`,
      );
      try {
        await this.giveUp(job.data.delivery_id, NOT_COMPLETED_FAILED);
      } catch (recording) {
        // The dead-letter job tries again.
        this.logger.warn(
          `webhook delivery ${job.data.delivery_id}: its failure could not be recorded: ${errorMessage(recording)}`,
        );
      }
      throw error;
    }
  }

  /**
   * The dead-letter handler: a job that failed for good. Its attempt is usually recorded already
   * (its last try did); when the worker of that try died, or the database refused that record too,
   * it is still pending and ends `failed` here.
   */
  async abandoned(job: QueuedJob<DeliveryJob>): Promise<void> {
    await this.giveUp(job.data.delivery_id, NOT_COMPLETED_ABANDONED);
  }

  private async deliver(deliveryId: string): Promise<void> {
    const delivery = await this.repo.findSendable(deliveryId);
    if (delivery === null || delivery.status !== 'pending') return;
    if (!delivery.active && isAutomatic(delivery.trigger)) {
      await this.record(delivery, {
        sent: {
          status: null,
          body: null,
          durationMs: 0,
          error: 'not sent: the subscription is inactive',
        },
      });
      return;
    }
    const result = await this.attempt(delivery);
    await this.record(delivery, { sent: result });
  }

  /** Ends a pending attempt `failed` with `reason`; does nothing to one recorded already. */
  private async giveUp(deliveryId: string, reason: string): Promise<void> {
    const delivery = await this.repo.findSendable(deliveryId);
    if (delivery === null || delivery.status !== 'pending') return;
    await this.record(delivery, { notCompleted: reason });
  }

  /** Signs and sends the attempt; never throws. */
  private async attempt(d: SendableDelivery): Promise<SendResult> {
    let secret: string;
    try {
      secret = decryptSecret(this.key, d.webhook_id, d.secret_ciphertext);
    } catch {
      return {
        status: null,
        body: null,
        durationMs: 0,
        error: 'not sent: the signing secret cannot be decrypted (was AUTH_SECRET changed?); rotate it',
      };
    }
    const body =
      d.format === 'slack'
        ? JSON.stringify(slackMessage(JSON.parse(d.body) as WebhookEventBody))
        : d.body;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'webhook-id': d.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, d.event_id, timestamp, body),
    };
    return sendWebhook(d.url, headers, body, {
      allowPrivate: this.config.webhooks.allowPrivate,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      maxBodyBytes: WEBHOOK_RESPONSE_BODY_BYTES,
    });
  }

  /**
   * Writes the outcome, the failure counter and the next attempt in one transaction. The next
   * attempt's number (the event's highest + 1) and the count of automatic attempts that bounds
   * the retries are read under the subscription's row lock, which redeliveries take too.
   */
  private async record(d: SendableDelivery, ending: Ending): Promise<void> {
    const sent = 'sent' in ending ? ending.sent : null;
    const succeeded = sent !== null && isDeliverySuccess(sent.status);
    await this.db.dataSource.transaction(async (m) => {
      const counters = await this.repo.lockCounters(m, d.webhook_id);
      if (counters === null) return;
      // A failure of the service itself is not the receiver's: it leaves the failure counter alone.
      const next = sent === null ? null : afterAttempt(counters.consecutive_failures, succeeded);
      const disable = next !== null && next.disable && counters.active;
      const active = counters.active && !disable;
      const { attempt, automatic } = await this.repo.nextAttempt(d.webhook_id, d.event_id, m);
      const retry =
        !succeeded &&
        shouldRetry({
          trigger: d.trigger,
          automaticAttempts: automatic,
          maxAttempts: this.config.webhooks.maxAttempts,
          active,
        });
      const delay = retryDelaySeconds(automatic, this.config.webhooks.retryBaseSeconds);
      const nextAttemptAt = retry ? new Date(Date.now() + delay * 1000) : null;
      const recorded = await this.repo.completeDelivery(
        m,
        d.id,
        sent === null
          ? {
              status: 'failed',
              responseStatus: null,
              responseBody: null,
              durationMs: null,
              error: 'notCompleted' in ending ? ending.notCompleted : null,
              nextAttemptAt,
            }
          : {
              status: succeeded ? 'succeeded' : 'failed',
              responseStatus: sent.status,
              responseBody: sent.body,
              durationMs: sent.durationMs,
              error: sent.error,
              nextAttemptAt,
            },
      );
      if (!recorded) return;
      if (next !== null) {
        await this.repo.setCounters(
          m,
          d.webhook_id,
          next.consecutiveFailures,
          disable ? DISABLED_AFTER_FAILURES_REASON : null,
        );
      }
      if (disable) this.logger.warn(`webhook ${d.webhook_id}: ${DISABLED_AFTER_FAILURES_REASON}`);
      if (nextAttemptAt !== null) {
        const id = uuidv7();
        await this.repo.insertDeliveries(
          [
            {
              id,
              projectId: d.project_id,
              webhookId: d.webhook_id,
              eventId: d.event_id,
              attempt,
              trigger: 'retry',
              nextAttemptAt,
            },
          ],
          m,
        );
        await this.jobs.send<DeliveryJob>(
          WEBHOOK_DELIVERY_QUEUE,
          { delivery_id: id },
          { id, startAfterSeconds: delay, manager: m },
        );
      }
    });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
