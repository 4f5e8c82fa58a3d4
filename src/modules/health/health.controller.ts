import { Controller, Get, Inject, Logger } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { withDeadline } from '../../common/deadline';
import { AppException } from '../../common/errors/app-exception';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../common/errors/problem.filter';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { HealthRepository } from './health.repository';
import { readinessVerdict } from './readiness';

/** Operational endpoints outside /api/v1 (CONTRACT §11); `/metrics` has its own port (MetricsServer). */
@ApiExcludeController()
@Controller()
export class HealthController {
  private readonly logger = new Logger('Readiness');

  constructor(
    private readonly health: HealthRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('healthz')
  @Endpoint({ summary: 'Process is up', access: 'public' })
  healthz() {
    return { status: 'ok' };
  }

  /**
   * Ready when the database answers within READINESS_TIMEOUT_MS and every migration is applied:
   * otherwise 503, so a load balancer takes the instance out of rotation while its database is
   * stalled or gone (`database_unavailable`) or not migrated (`service_unavailable`).
   */
  @Get('readyz')
  @Endpoint({ summary: 'Database reachable and migrations applied', access: 'public' })
  async readyz() {
    const ms = this.config.readinessTimeoutMs;
    let applied: string[];
    try {
      applied = await withDeadline(this.health.appliedMigrations(ms), ms);
    } catch (err) {
      this.logger.warn({ err }, 'the database is not ready');
      throw new AppException(
        'database_unavailable',
        `The database did not answer within ${ms} ms`,
        undefined,
        { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      );
    }
    if (readinessVerdict(this.health.migrations(), applied) === 'migrations_pending') {
      throw new AppException('service_unavailable', 'Migrations are pending');
    }
    return { status: 'ready' };
  }
}
