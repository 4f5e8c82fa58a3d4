import type { Writable } from 'node:stream';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { AppConfig } from './config/config';
import { setupApp } from './setup-app';

export { prepareDatabase } from './database/prepare';

/** Builds the configured application (shared by main.ts, the tests, the corpus runner). */
export async function createApp(
  config: AppConfig,
  databaseUrl: string,
  logStream?: Writable,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, databaseUrl, logStream),
    new ExpressAdapter(),
    { bodyParser: false, bufferLogs: true },
  );
  setupApp(app);
  return app;
}
