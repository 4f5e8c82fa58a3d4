import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import type { Writable } from 'node:stream';
import { AppConfig } from './config/config';
import { CommonModule } from './common/common.module';
import { RolesGuard } from './common/access/roles.guard';
import { createHttpLogger, HTTP_LOGGER } from './common/http/logging';
import { TransactionInterceptor } from './common/persistence/transaction.interceptor';
import { dataSourceOptions } from './database/data-source-options';
import { FEATURE_MODULES } from './modules';

@Module({})
export class AppModule {
  /** `logStream` replaces stdout as the log destination (tests capture logs with it). */
  static forRoot(config: AppConfig, databaseUrl: string, logStream?: Writable): DynamicModule {
    const http = createHttpLogger(config, logStream);
    return {
      module: AppModule,
      imports: [
        CommonModule.forRoot(config),
        LoggerModule.forRoot({
          // The request logger itself is mounted by setupApp, first, for every request (one completion
          // line each); here Nest only binds `req.log` so that logs written by handlers carry the id.
          forRoutes: [{ path: '{/*splat}', method: RequestMethod.ALL }],
          useExisting: true,
          pinoHttp: { logger: http.logger },
        }),
        TypeOrmModule.forRoot({ ...dataSourceOptions(databaseUrl), autoLoadEntities: true }),
        ...FEATURE_MODULES,
      ],
      providers: [
        { provide: HTTP_LOGGER, useValue: http.middleware },
        { provide: APP_GUARD, useClass: RolesGuard },
        { provide: APP_INTERCEPTOR, useClass: TransactionInterceptor },
      ],
    };
  }
}
