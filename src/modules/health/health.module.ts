import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthRepository } from './health.repository';
import { MetricsServer } from './metrics.server';

@Module({ controllers: [HealthController], providers: [HealthRepository, MetricsServer] })
export class HealthModule {}
