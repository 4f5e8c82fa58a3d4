import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { AppException } from '../../common/errors/app-exception';
import { MetricsService } from '../../common/http/metrics.service';

/** Operational endpoints outside /api/v1 (CONTRACT §11). */
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: MetricsService,
  ) {}

  @Get('healthz')
  @Endpoint({ summary: 'Process is up', access: 'public' })
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @Endpoint({ summary: 'Database reachable and migrations applied', access: 'public' })
  async readyz() {
    try {
      await this.dataSource.query('SELECT 1');
      const pending = await this.dataSource.showMigrations();
      if (pending) throw new AppException('service_unavailable', 'Migrations are pending');
      return { status: 'ready' };
    } catch (err) {
      if (err instanceof AppException) throw err;
      throw new AppException('service_unavailable', 'The database is unreachable');
    }
  }

  @Get('metrics')
  @Endpoint({ summary: 'Prometheus metrics', access: 'public' })
  @Header('Cache-Control', 'no-store')
  async prometheus(@Res() res: Response) {
    res.setHeader('Content-Type', this.metrics.registry.contentType);
    res.send(await this.metrics.registry.metrics());
  }
}
