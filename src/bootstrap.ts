import type { Writable } from 'node:stream';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { ExpressServerAdapter } from './common/http/express-server';
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
    new ExpressServerAdapter(),
    { bodyParser: false, bufferLogs: true },
  );
  setupApp(app);
  return app;
}
