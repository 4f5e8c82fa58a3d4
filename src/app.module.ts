import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Writable } from 'node:stream';
import { AppConfig } from './config/config';
import { CommonModule } from './common/common.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { JobsModule } from './common/jobs/jobs.module';
import { RolesGuard } from './common/access/roles.guard';
import type { Logger } from 'pino';
import { AppLogger, ROOT_LOGGER, rootLoggerOf } from './common/http/logging';
import { dataSourceOptions } from './database/data-source-options';
import { FEATURE_MODULES } from './modules';

@Module({})
export class AppModule {
  /** `log`: the root logger, or a stream replacing stdout as the log destination (tests). */
  static forRoot(config: AppConfig, databaseUrl: string, log?: Writable | Logger): DynamicModule {
    const logger = rootLoggerOf(config, log);
    return {
      module: AppModule,
      imports: [
        CommonModule.forRoot(config),
        IdempotencyModule,
        JobsModule,
        TypeOrmModule.forRoot({
          ...dataSourceOptions(databaseUrl, { poolSize: config.dbPoolSize, deadlines: config.db }),
          autoLoadEntities: true,
        }),
        ...FEATURE_MODULES,
      ],
      providers: [
        { provide: ROOT_LOGGER, useValue: logger },
        AppLogger,
        { provide: APP_GUARD, useClass: RolesGuard },
      ],
    };
  }
}
