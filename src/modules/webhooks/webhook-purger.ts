import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { WEBHOOK_DELIVERY_RETENTION_DAYS } from './webhook-policy';
import { WebhooksRepository } from './webhooks.repository';

/** How often each instance purges the delivery log. */
export const WEBHOOK_PURGE_INTERVAL_MS = 10 * 60 * 1000;
/** Rows deleted per statement by the purge. */
export const WEBHOOK_PURGE_BATCH = 1000;

/**
 * Deletes delivery log entries older than {@link WEBHOOK_DELIVERY_RETENTION_DAYS} days, and the
 * outbox events none refers to any more, periodically on every instance (small batches, skipping
 * rows another instance is deleting). The timer is unref'd: it never keeps a process alive.
 */
@Injectable()
export class WebhookPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookPurger');
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly repo: WebhooksRepository) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), WEBHOOK_PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One purge, batch after batch until a batch finds nothing more; returns the rows deleted. */
  async purge(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.repo.purgeOlderThan(WEBHOOK_DELIVERY_RETENTION_DAYS, WEBHOOK_PURGE_BATCH);
      total += deleted;
      if (deleted === 0) return total;
    }
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const deleted = await this.purge();
      if (deleted > 0) this.logger.log(`purged ${deleted} old webhook deliveries and events`);
    } catch (error) {
      this.logger.warn(`purging old webhook deliveries failed: ${String(error)}`);
    } finally {
      this.running = false;
    }
  }
}
