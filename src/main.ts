import 'reflect-metadata';
import type { Server } from 'node:http';
import { createApp, prepareDatabase } from './bootstrap';
import { ConfigError, loadConfig } from './config/config';
import { EmbeddedHandle, startEmbeddedPostgres } from './database/embedded-postgres';
import { EmbeddedPostgresError } from './database/embedded-root';

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

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    say(
      `Starting embedded PostgreSQL on 127.0.0.1:${config.embeddedPgPort} (data in ${config.dataDir}/pg)`,
    );
    try {
      embedded = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        port: config.embeddedPgPort,
      });
    } catch (err) {
      if (err instanceof EmbeddedPostgresError) {
        process.stderr.write(`Embedded PostgreSQL: ${err.message}\n`);
        process.exit(1);
      }
      throw err;
    }
    for (const note of embedded.notes) say(note);
    databaseUrl = embedded.url;
  }

  await prepareDatabase(config, databaseUrl, say);
  const app = await createApp(config, databaseUrl);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal} received: finishing in-flight requests and shutting down`);
    // A request that never ends must not keep the process alive forever.
    setTimeout(() => {
      say(`In-flight requests still running after ${SHUTDOWN_GRACE_MS} ms: exiting anyway`);
      void stopEmbedded().finally(() => process.exit(1));
    }, SHUTDOWN_GRACE_MS).unref();
    // Keep-alive connections that fall idle after their last answer are closed right away.
    const server = app.getHttpServer() as Server;
    setInterval(() => server.closeIdleConnections(), 100).unref();
    let code = 0;
    try {
      // Stops accepting, waits for in-flight requests (answered in full), then closes the pool.
      await app.close();
    } catch (err) {
      code = 1;
      process.stderr.write(`Shutdown failed: ${describe(err)}\n`);
    } finally {
      await stopEmbedded();
      say('Stopped');
      process.exit(code);
    }
  };
  // embedded-postgres installs signal handlers (async-exit-hook) that stop the database and exit at
  // once, which would cut in-flight requests off: from here on this graceful shutdown owns them.
  for (const signal of SIGNALS) {
    process.removeAllListeners(signal);
    process.once(signal, () => void shutdown(signal));
  }

  await app.listen(config.port, config.host);
  say(
    `Listening on http://${config.host}:${config.port} — API under /api/v1, docs at /docs and /redoc`,
  );
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
const SHUTDOWN_GRACE_MS = 25_000;
let embedded: EmbeddedHandle | null = null;

async function stopEmbedded(): Promise<void> {
  const handle = embedded;
  embedded = null;
  if (handle) await handle.stop().catch(() => undefined);
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

main().catch(async (err: unknown) => {
  process.stderr.write(`Startup failed: ${describe(err)}\n`);
  // Do not leave the embedded database running behind a failed start.
  await stopEmbedded();
  process.exit(1);
});
