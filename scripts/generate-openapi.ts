import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module';
import { loadConfig } from '../src/config/config';
import { buildOpenApiDocument } from '../src/common/openapi/openapi';

/**
 * Writes the OpenAPI document to openapi.json (committed). With --check, fails when the committed
 * file differs from what the code declares. Runs in Nest's preview mode: no database needed.
 */
async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const config = loadConfig(
    { AUTH_SECRET: 'x'.repeat(40), DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', LOG_LEVEL: 'silent' },
    { persistSecret: false },
  );
  const app = await NestFactory.create(AppModule.forRoot(config, config.databaseUrl as string), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  app.setGlobalPrefix('api/v1', { exclude: ['healthz', 'readyz', 'metrics'] });
  const doc = buildOpenApiDocument(app);
  const text = JSON.stringify(doc, null, 2) + '\n';
  const file = join(__dirname, '..', '..', 'openapi.json');
  if (check) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      // missing counts as different
    }
    if (current !== text) {
      process.stderr.write('openapi.json is out of date: run `npm run openapi:generate` and commit it.\n');
      process.exit(1);
    }
    process.stdout.write('openapi.json is up to date\n');
  } else {
    writeFileSync(file, text);
    process.stdout.write(`wrote ${file} (${Object.keys(doc.paths).length} paths)\n`);
  }
  await app.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
