import 'reflect-metadata';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { createRootLogger } from './common/http/logging';
import { ConfigError, loadConfig, type LogFormat, logFormatOf } from './config/config';
import type * as Bootstrap from './bootstrap';
import type * as Embedded from './database/embedded-postgres';
import type { EmbeddedHandle } from './database/embedded-postgres';
import { EmbeddedPostgresError } from './database/embedded-root';

/**
 * Every line the process writes goes through this one pino logger (JSON, or pretty with
 * LOG_FORMAT=pretty). Until the configuration is loaded it is an `info` logger in the requested
 * format (JSON when LOG_FORMAT itself is wrong), so a refused configuration is a log line too.
 */
let log: Logger = createRootLogger({ logLevel: 'info', logFormat: earlyLogFormat() });

function earlyLogFormat(): LogFormat {
  try {
    return logFormatOf(process.env);
  } catch {
    return 'json';
  }
}

/** Node's own warnings and a crash are log lines, not free text on stderr. */
function routeProcessOutput(): void {
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) =>
    log.warn({ warning: w.name, code: w.code }, w.message),
  );
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, `Uncaught exception: ${err.message}`);
    void stopEmbedded().finally(() => process.exit(1));
  });
}

/** `host:port/database` of a PostgreSQL URL: never its user name or password. */
function databaseLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured database';
  }
}

async function main(): Promise<void> {
  routeProcessOutput();
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      log.fatal(`Configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  log = createRootLogger(config);
  // The application is loaded once the configuration is known good, so a refused one exits at once
  // (loading it takes seconds). `require`: a dynamic import() would be an ES module import here.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createApp, prepareDatabase } = require('./bootstrap') as typeof Bootstrap;
  const { startEmbeddedPostgres } = require('./database/embedded-postgres') as typeof Embedded;
  /* eslint-enable @typescript-eslint/no-require-imports */
  // The boot and shutdown lines are written whatever LOG_LEVEL says (as before: the generated
  // administrator password is printed once, and only then).
  const boot = log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });

  for (const warning of config.warnings) boot.warn(warning);

  // Boot sequence, in this order: the database, its migrations, the application, "Listening" last.
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    boot.info(
      `Starting embedded PostgreSQL on 127.0.0.1:${config.embeddedPgPort} (data in ${config.dataDir}/pg)`,
    );
    try {
      embedded = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        port: config.embeddedPgPort,
        // The server's own output (initdb, postgres) as debug lines.
        onLog: (line) => log.debug({ source: 'postgres' }, line),
      });
    } catch (err) {
      if (err instanceof EmbeddedPostgresError) {
        boot.fatal(`Embedded PostgreSQL: ${err.message}`);
        process.exit(1);
      }
      throw err;
    }
    for (const note of embedded.notes) boot.info(note);
    databaseUrl = embedded.url;
    boot.info(`Embedded PostgreSQL started on 127.0.0.1:${config.embeddedPgPort}`);
  } else {
    boot.info(`Connecting to the database at ${databaseLabel(databaseUrl)}`);
  }

  const { applied } = await prepareDatabase(config, databaseUrl, (msg) => boot.info(msg));
  boot.info(
    { migrations_applied: applied.length },
    applied.length === 0
      ? 'Database migrations: the schema is up to date'
      : `Database migrations: applied ${applied.length} (${applied[applied.length - 1]} last)`,
  );
  const app = await createApp(config, databaseUrl, log);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    boot.info(`${signal} received: finishing in-flight requests and shutting down`);
    // A request that never ends must not keep the process alive forever.
    setTimeout(() => {
      boot.warn(`In-flight requests still running after ${SHUTDOWN_GRACE_MS} ms: exiting anyway`);
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
      boot.error({ err }, `Shutdown failed: ${describe(err)}`);
    } finally {
      await stopEmbedded();
      boot.info('Stopped');
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
  // The bound port: PORT=0 picks a free one.
  const bound = (app.getHttpServer() as Server).address();
  const port = bound !== null && typeof bound === 'object' ? bound.port : config.port;
  boot.info(
    `Listening on http://${config.host}:${port} — API under /api/v1, docs at /docs and /redoc`,
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
  return err instanceof Error ? err.message : String(err);
}

main().catch(async (err: unknown) => {
  log.fatal({ err }, `Startup failed: ${describe(err)}`);
  // Do not leave the embedded database running behind a failed start.
  await stopEmbedded();
  process.exit(1);
});
