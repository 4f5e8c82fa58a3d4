import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';
import type { Writable } from 'node:stream';
import { AppConfig } from './config/config';
import { CommonModule } from './common/common.module';
import { RolesGuard } from './common/access/roles.guard';
import { TransactionInterceptor } from './common/persistence/transaction.interceptor';
import { dataSourceOptions } from './database/data-source-options';
import { FEATURE_MODULES } from './modules';

@Module({})
export class AppModule {
  /** `logStream` replaces stdout as the log destination (tests capture logs with it). */
  static forRoot(config: AppConfig, databaseUrl: string, logStream?: Writable): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CommonModule.forRoot(config),
        LoggerModule.forRoot({
          // Explicit routes: the default also re-adds prefix-excluded paths, which logged them twice.
          forRoutes: [{ path: '{/*splat}', method: RequestMethod.ALL }],
          pinoHttp: {
            level: config.logLevel,
            genReqId: (req: IncomingMessage) => (req as IncomingMessage & { requestId?: string }).requestId ?? '',
            redact: {
              paths: [
                'req.headers.authorization',
                'req.headers.cookie',
                'req.headers["x-api-key"]',
                'res.headers["set-cookie"]',
              ],
              censor: '[redacted]',
            },
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({
                request_id: req.id,
                method: req.method,
                // The query string can carry nothing secret by design, but keep logs short.
                url: req.url.split('?')[0],
              }),
            },
            autoLogging: { ignore: (req: IncomingMessage) => req.url === '/healthz' || req.url === '/metrics' },
            ...(logStream ? { stream: logStream } : {}),
          },
        }),
        TypeOrmModule.forRoot({ ...dataSourceOptions(databaseUrl), autoLoadEntities: true }),
        ...FEATURE_MODULES,
      ],
      providers: [
        { provide: APP_GUARD, useClass: RolesGuard },
        { provide: APP_INTERCEPTOR, useClass: TransactionInterceptor },
      ],
    };
  }
}
