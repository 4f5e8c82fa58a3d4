import type { Writable } from 'node:stream';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { AppConfig } from './config/config';
import { ensureBootstrapAdmin } from './database/bootstrap-admin';
import { dataSourceOptions } from './database/data-source-options';
import { migrateUnderLock } from './database/migrate';
import { setupApp } from './setup-app';

/**
 * Migrates the database (under the advisory lock, creating the bootstrap administrator on an empty
 * database) and builds the configured application. Shared by main.ts and the tests.
 */
export async function prepareDatabase(
  config: AppConfig,
  databaseUrl: string,
  log: (msg: string) => void = () => undefined,
): Promise<void> {
  const ds = new DataSource(dataSourceOptions(databaseUrl, { extra: { max: 2 } }));
  await ds.initialize();
  try {
    await migrateUnderLock(ds, async () => {
      const res = await ensureBootstrapAdmin(ds, config.adminUsername, config.adminPassword);
      if (res.created && res.generatedPassword) {
        // Printed once, on the very first start; never logged again.
        log(
          `Created administrator "${config.adminUsername}" with generated password: ${res.generatedPassword}  (change it with PUT /api/v1/users/{id}/password)`,
        );
      } else if (res.created) {
        log(`Created administrator "${config.adminUsername}" with the password from ADMIN_PASSWORD`);
      }
    });
  } finally {
    await ds.destroy();
  }
}

export async function createApp(
  config: AppConfig,
  databaseUrl: string,
  logStream?: Writable,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, databaseUrl, logStream), {
    bodyParser: false,
    bufferLogs: true,
  });
  setupApp(app);
  return app;
}
