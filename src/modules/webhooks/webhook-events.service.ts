import { Injectable } from '@nestjs/common';
import { JobQueue } from '../../common/jobs/job-queue.service';
import { uuidv7 } from '../../common/persistence/ids';
import type { WebhookEventBody } from './slack-format';
import { WEBHOOK_PING_EVENT, type WebhookEventType } from './webhook-policy';
import { NewDelivery, WebhooksRepository } from './webhooks.repository';

/** The job queue of webhook attempts: one job per attempt, its id the attempt's id. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';

/** The data of a delivery job. */
export interface DeliveryJob {
  delivery_id: string;
}

/**
 * Emits webhook events (the transactional outbox). Called by the services whose changes cause
 * events, inside the request's transaction, after the change: the event row, one pending attempt
 * per listening subscription and their delivery jobs are written in that same transaction, so a
 * rolled-back change sends nothing and a committed one cannot lose its event.
 *
 * `data` is the resource as its GET answers it (the emitting service builds it: this module
 * depends on no feature module, so any of them may depend on it).
 */
@Injectable()
export class WebhookEvents {
  constructor(
    private readonly repo: WebhooksRepository,
    private readonly jobs: JobQueue,
  ) {}

  /**
   * Emits `type` in `projectId` with `data` (or what the function returns: called only when someone
   * listens, for data that costs something to build); nothing is written when no active
   * subscription of the project listens to it. Returns the event id, or null when nobody listens.
   */
  async emit(
    projectId: string,
    type: WebhookEventType,
    data: object | (() => object),
  ): Promise<string | null> {
    return this.emitTo(projectId, type, await this.repo.subscribersOf(projectId, type), data);
  }

  /**
   * {@link emit} to subscribers the caller has read already, in this transaction, with
   * `subscribersSql` in its own statement (one round trip less on a hot write).
   */
  async emitTo(
    projectId: string,
    type: WebhookEventType,
    subscribers: readonly string[],
    data: object | (() => object),
  ): Promise<string | null> {
    if (subscribers.length === 0) return null;
    const payload = typeof data === 'function' ? data() : data;
    return (await this.write(projectId, type, payload, subscribers, 'event')).eventId;
  }

  /**
   * A `webhook.ping` event for one subscription (sent even when it is inactive); returns the id of
   * its attempt.
   */
  async ping(projectId: string, webhookId: string): Promise<string> {
    const { deliveryIds } = await this.write(
      projectId,
      WEBHOOK_PING_EVENT,
      { webhook_id: webhookId },
      [webhookId],
      'ping',
    );
    return deliveryIds[0];
  }

  /** Enqueues pending attempts (their rows and jobs) in the current transaction. */
  async enqueue(deliveries: readonly NewDelivery[]): Promise<void> {
    await this.repo.insertDeliveries(deliveries);
    await this.jobs.sendMany<DeliveryJob>(
      WEBHOOK_DELIVERY_QUEUE,
      deliveries.map((d) => ({ id: d.id, data: { delivery_id: d.id } })),
    );
  }

  private async write(
    projectId: string,
    type: string,
    data: object,
    webhookIds: readonly string[],
    trigger: 'event' | 'ping',
  ): Promise<{ eventId: string; deliveryIds: string[] }> {
    const id = uuidv7();
    const createdAt = new Date();
    const body: WebhookEventBody = {
      id,
      type,
      created_at: createdAt.toISOString(),
      project_id: projectId,
      data: data as Record<string, unknown>,
    };
    await this.repo.insertEvent({ id, projectId, type, body: JSON.stringify(body), createdAt });
    const deliveries = webhookIds.map(
      (webhookId): NewDelivery => ({
        id: uuidv7(),
        projectId,
        webhookId,
        eventId: id,
        attempt: 1,
        trigger,
        nextAttemptAt: createdAt,
      }),
    );
    await this.enqueue(deliveries);
    return { eventId: id, deliveryIds: deliveries.map((d) => d.id) };
  }
}
