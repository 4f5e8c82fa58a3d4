import {
  Global,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';

/** How often each instance deletes expired idempotency keys. */
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Deletes expired idempotency keys periodically on every instance (batches by the expiry index,
 * skipping rows another instance is deleting), so requests never pay for it. The timer is unref'd:
 * it never keeps a process alive.
 */
@Injectable()
export class IdempotencyPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyPurger');
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly idempotency: IdempotencyService) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), IDEMPOTENCY_PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const deleted = await this.idempotency.purgeExpired();
      if (deleted > 0) this.logger.log(`purged ${deleted} expired idempotency keys`);
    } catch (error) {
      this.logger.warn(`purging expired idempotency keys failed: ${String(error)}`);
    } finally {
      this.running = false;
    }
  }
}

/** `Idempotency-Key` support for every `@Transactional()` POST (global: TransactionInterceptor uses it). */
@Global()
@Module({
  providers: [IdempotencyRepository, IdempotencyService, IdempotencyPurger],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
