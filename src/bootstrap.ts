import type { Writable } from 'node:stream';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import { AppLogger, rootLoggerOf } from './common/http/logging';
import { AppConfig } from './config/config';
import { setupApp } from './setup-app';

export { prepareDatabase } from './database/prepare';

/**
 * Builds the configured application (shared by main.ts, the tests, the corpus runner). `log` is the
 * process's root logger (main.ts), or a stream the logs go to (tests), else stdout. Nest writes
 * through it from the first line (no buffering), and a failure while building is thrown to the
 * caller rather than aborting the process.
 */
export async function createApp(
  config: AppConfig,
  databaseUrl: string,
  log?: Writable | Logger,
): Promise<NestExpressApplication> {
  const logger = rootLoggerOf(config, log);
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, databaseUrl, logger),
    new ExpressAdapter(),
    { bodyParser: false, logger: new AppLogger(logger), abortOnError: false },
  );
  setupApp(app);
  return app;
}
