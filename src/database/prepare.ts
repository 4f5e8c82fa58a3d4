import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config';
import { ensureBootstrapAdmin } from './bootstrap-admin';
import { dataSourceOptions } from './data-source-options';
import { migrateUnderLock } from './migrate';

/** What {@link prepareDatabase} did: the names of the migrations it applied (none: up to date). */
export interface PreparedDatabase {
  applied: string[];
}

/**
 * Migrates the database (under the advisory lock, creating the bootstrap administrator on an empty
 * database). Shared by main.ts, the
 * tests' global setup and the tools; free of NestJS imports so it loads anywhere. `log` receives
 * the administrator's creation only (printed once); the caller reports the migrations.
 */
export async function prepareDatabase(
  config: AppConfig,
  databaseUrl: string,
  log: (msg: string) => void = () => undefined,
): Promise<PreparedDatabase> {
  // No statement deadlines: a migration may run long, or wait for another instance's migration lock.
  const ds = new DataSource(dataSourceOptions(databaseUrl, { poolSize: 2 }));
  await ds.initialize();
  try {
    const applied = await migrateUnderLock(ds, async () => {
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
    return { applied };
  } finally {
    await ds.destroy();
  }
}

