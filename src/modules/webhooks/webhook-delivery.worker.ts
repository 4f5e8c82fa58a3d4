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
 * Runs delivery jobs on any instance (the job queue hands each job to one worker at a time). One
 * job is one attempt, identified by its delivery row: an attempt that is no longer pending was
 * recorded already and is not sent again. The outcome, the subscription's failure counter and the
 * next attempt (its row and its job) are written in one transaction.
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
        retryLimit: 3,
        retryDelaySeconds: 5,
        retryBackoff: true,
        // Well above one attempt (10 s) plus its writes: a job of a dead instance is run again.
        expireInSeconds: 120,
        batchSize: WEBHOOK_DELIVERY_BATCH,
      },
      (job) => this.handle(job),
    );
  }

  async handle(job: QueuedJob<DeliveryJob>): Promise<void> {
    const delivery = await this.repo.findSendable(job.data.delivery_id);
    if (delivery === null || delivery.status !== 'pending') return;
    if (!delivery.active && (delivery.trigger === 'event' || delivery.trigger === 'retry')) {
      await this.record(delivery, {
        status: null,
        body: null,
        durationMs: 0,
        error: 'not sent: the subscription is inactive',
      });
      return;
    }
    const result = await this.attempt(delivery);
    await this.record(delivery, result);
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

  /** Writes the outcome, the failure counter and the next attempt in one transaction. */
  private async record(d: SendableDelivery, result: SendResult): Promise<void> {
    const succeeded = isDeliverySuccess(result.status);
    await this.db.dataSource.transaction(async (m) => {
      const counters = await this.repo.lockCounters(m, d.webhook_id);
      if (counters === null) return;
      const next = afterAttempt(counters.consecutive_failures, succeeded);
      const disable = next.disable && counters.active;
      const active = counters.active && !disable;
      const retry =
        !succeeded &&
        shouldRetry({
          trigger: d.trigger,
          attempt: d.attempt,
          maxAttempts: this.config.webhooks.maxAttempts,
          active,
        });
      const delay = retryDelaySeconds(d.attempt, this.config.webhooks.retryBaseSeconds);
      const nextAttemptAt = retry ? new Date(Date.now() + delay * 1000) : null;
      const recorded = await this.repo.completeDelivery(m, d.id, {
        status: succeeded ? 'succeeded' : 'failed',
        responseStatus: result.status,
        responseBody: result.body,
        durationMs: result.durationMs,
        error: result.error,
        nextAttemptAt,
      });
      if (!recorded) return;
      await this.repo.setCounters(
        m,
        d.webhook_id,
        next.consecutiveFailures,
        disable ? DISABLED_AFTER_FAILURES_REASON : null,
      );
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
              attempt: d.attempt + 1,
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
