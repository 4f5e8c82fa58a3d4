import 'reflect-metadata';
import { createApp, prepareDatabase } from './bootstrap';
import { ConfigError, loadConfig } from './config/config';
import { EmbeddedHandle, startEmbeddedPostgres } from './database/embedded-postgres';

function say(msg: string): void {
  process.stdout.write(JSON.stringify({ level: 'info', time: Date.now(), msg }) + '\n');
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }

  for (const warning of config.warnings) {
    process.stdout.write(JSON.stringify({ level: 'warn', time: Date.now(), msg: warning }) + '\n');
  }

  let embedded: EmbeddedHandle | null = null;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    say(
      `Starting embedded PostgreSQL on 127.0.0.1:${config.embeddedPgPort} (data in ${config.dataDir}/pg)`,
    );
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      port: config.embeddedPgPort,
    });
    databaseUrl = embedded.url;
  }

  await prepareDatabase(config, databaseUrl, say);
  const app = await createApp(config, databaseUrl);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal} received: finishing in-flight requests and shutting down`);
    try {
      await app.close(); // stops accepting, waits for in-flight requests, closes the pool
    } finally {
      if (embedded) await embedded.stop();
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  await app.listen(config.port, config.host);
  say(
    `Listening on http://${config.host}:${config.port} — API under /api/v1, docs at /docs and /redoc`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Startup failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
