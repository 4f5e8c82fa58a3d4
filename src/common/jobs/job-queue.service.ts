import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import PgBoss from 'pg-boss';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { poolOf } from '../../database/data-source-options';
import { currentStore } from '../persistence/request-context';
import { JOB_QUEUE_SCHEMA } from './job-queue.constants';
import { toWellFormedText } from '../validation/well-formed';

/** One job as a handler sees it. */
export interface QueuedJob<T> {
  id: string;
  data: T;
  /** How many times this job failed before (0 on the first attempt). */
  retryCount: number;
}

/** How a queue retries and when a job that stopped reporting counts as failed. */
export interface QueueSettings {
  /** Retries after the first attempt (pg-boss `retryLimit`). */
  retryLimit: number;
  /** Seconds before the first retry (pg-boss `retryDelay`). */
  retryDelaySeconds: number;
  /** Doubles the delay at each retry (pg-boss `retryBackoff`). */
  retryBackoff: boolean;
  /**
   * Seconds a running job may take. A job whose instance died is handed to another instance once
   * this has passed (pg-boss expiry), so it must exceed the longest honest run of the job.
   */
  expireInSeconds: number;
  /**
   * Jobs an instance fetches per poll and runs side by side (default 1). A worker polls once per
   * JOB_POLL_INTERVAL_SECONDS, so this bounds the queue's throughput per instance; a job that
   * fails is failed alone (the others of its batch complete).
   */
  batchSize?: number;
}

export type JobHandler<T> = (job: QueuedJob<T>) => Promise<void>;

interface Registration {
  name: string;
  settings: QueueSettings;
  handler: JobHandler<unknown>;
  deadLetter?: JobHandler<unknown>;
}

/** Suffix of the queue that receives a queue's jobs once they failed for good. */
export const DEAD_LETTER_SUFFIX = '-dead';

/** How the dead-letter queue of a queue runs its (short, idempotent) clean-up handler. */
const DEAD_LETTER_SETTINGS: QueueSettings = {
  retryLimit: 5,
  retryDelaySeconds: 5,
  retryBackoff: true,
  expireInSeconds: 300,
};

/**
 * The PostgreSQL job queue (pg-boss), shared by every instance: a job sent on one instance runs on
 * whichever instance fetches it first (`SKIP LOCKED`), never on two at once, and a job whose
 * instance died is retried by another after its expiry. Features register their handlers in
 * `onModuleInit`; the queue starts once the application has bootstrapped.
 *
 * `send` inside a request's transaction writes the job in that transaction (pg-boss's public
 * per-call `db` option), so a rolled-back change enqueues nothing and a committed one cannot lose
 * its job: the transactional outbox pattern without a second table.
 */
@Injectable()
export class JobQueue implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('JobQueue');
  private readonly registrations = new Map<string, Registration>();
  private boss: PgBoss | null = null;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Declares a queue and the handler this instance runs for it (call from `onModuleInit`).
   * `deadLetter` runs once for a job that failed for good: after its last retry, including one
   * whose instance died during that retry (the queue fails it at its expiry), so work a handler
   * could not finish is always closed (pg-boss's dead-letter queue, `<name>-dead`).
   */
  register<T>(
    name: string,
    settings: QueueSettings,
    handler: JobHandler<T>,
    deadLetter?: JobHandler<T>,
  ): void {
    if (this.boss !== null) throw new Error(`JobQueue: register "${name}" before bootstrap`);
    this.registrations.set(name, {
      name,
      settings,
      handler: handler as JobHandler<unknown>,
      deadLetter: deadLetter as JobHandler<unknown> | undefined,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const pool = poolOf(this.dataSource);
    const boss = new PgBoss({
      db: {
        // Once stopped, the statement pg-boss still sends for a handler that outlived the stop (it
        // completes or fails the job without awaiting the answer) is never sent and never
        // answered: the pool is closing, and pg-boss already failed that job back to the queue.
        executeSql: (text, values) =>
          this.stopped ? new Promise<never>(() => undefined) : pool.query(text, values),
      },
      schema: JOB_QUEUE_SCHEMA,
      schedule: false,
      supervise: true,
      migrate: true,
    });
    boss.on('error', (error: Error) => this.logger.warn(`job queue: ${error.message}`));
    this.boss = boss;
    await boss.start();
    for (const registration of this.registrations.values()) {
      await this.declare(boss, registration);
    }
  }

  /**
   * Stops the workers before Nest closes the HTTP server and the modules (TypeORM ends the pool in
   * its own onApplicationShutdown): no job is fetched any more, running jobs get a few seconds to
   * finish, then pg-boss fails them back to the queue while the pool still works, and another
   * instance retries them. The pool is the application's, so pg-boss must not close it.
   *
   * Only the workers stop: `send` and `sendMany` keep working until the pool closes, because the
   * HTTP server drains its in-flight requests after this hook, and a request that queues work (a
   * webhook event, a background import) must still commit it.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const boss = this.boss;
    if (boss === null || this.stopped) return;
    await boss.stop({ graceful: true, close: false, wait: true, timeout: 5_000 });
    this.stopped = true;
  }

  /**
   * Enqueues a job: in the current request's transaction when one is open (committed with it or
   * not at all), else on its own. Returns the job id. `manager`: a transaction opened outside a
   * request (a job handler's own), used instead of the request's.
   */
  async send<T extends object>(
    name: string,
    data: T,
    options: { startAfterSeconds?: number; id?: string; manager?: EntityManager } = {},
  ): Promise<string> {
    const boss = this.started();
    const id = await boss.send(name, data, {
      id: options.id,
      startAfter: options.startAfterSeconds,
      db: this.transactionDb(options.manager),
    });
    if (id === null) throw new Error(`JobQueue: "${name}" refused a job`);
    return id;
  }

  /**
   * Enqueues several jobs of one queue in one statement (pg-boss `insert`), in the open transaction
   * like {@link send}; each job takes its queue's retry and expiry settings.
   */
  async sendMany<T extends object>(
    name: string,
    jobs: ReadonlyArray<{ id?: string; data: T }>,
    options: { manager?: EntityManager } = {},
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.started().insert(
      jobs.map((job) => ({ name, id: job.id, data: job.data })),
      { db: this.transactionDb(options.manager) },
    );
  }

  /**
   * pg-boss's per-call `db`: the open transaction (`manager`, else the request's), else the pool
   * itself. Never pg-boss's own `db`, which goes quiet once the workers stopped (see
   * onApplicationBootstrap), while a request still draining at shutdown may enqueue on its own.
   */
  private transactionDb(given?: EntityManager): PgBoss.Db {
    const manager = given ?? currentStore()?.manager;
    if (manager?.queryRunner?.isTransactionActive !== true) {
      const pool = poolOf(this.dataSource);
      return { executeSql: (text, values) => pool.query(text, values) };
    }
    return {
      executeSql: async (text: string, values: unknown[]) => ({
        rows: (await manager.query(text, values)) as unknown[],
      }),
    };
  }

  private started(): PgBoss {
    if (this.boss === null) throw new Error('JobQueue: not started');
    return this.boss;
  }

  private async declare(boss: PgBoss, registration: Registration): Promise<void> {
    const { name, settings, handler, deadLetter } = registration;
    const dead = deadLetter === undefined ? undefined : `${name}${DEAD_LETTER_SUFFIX}`;
    if (dead !== undefined && deadLetter !== undefined) {
      await this.declare(boss, { name: dead, settings: DEAD_LETTER_SETTINGS, handler: deadLetter });
    }
    const options = {
      name,
      retryLimit: settings.retryLimit,
      retryDelay: settings.retryDelaySeconds,
      retryBackoff: settings.retryBackoff,
      expireInSeconds: settings.expireInSeconds,
      ...(dead === undefined ? {} : { deadLetter: dead }),
    };
    // pg-boss creates a queue once (ON CONFLICT DO NOTHING): instances starting together agree;
    // the update applies changed settings (and the dead-letter queue) to a queue created earlier.
    await boss.createQueue(name, options);
    await boss.updateQueue(name, options);
    if (!this.config.jobs.workers) return;
    const batchSize = settings.batchSize ?? 1;
    await boss.work<unknown>(
      name,
      {
        batchSize,
        pollingIntervalSeconds: this.config.jobs.pollIntervalSeconds,
        includeMetadata: true,
      },
      async (jobs) => {
        if (jobs.length === 1) {
          try {
            await handler({ id: jobs[0].id, data: jobs[0].data, retryCount: jobs[0].retryCount });
          } catch (reason) {
            throw jobFailure(reason);
          }
          return;
        }
        const outcomes = await Promise.allSettled(
          jobs.map((job) => handler({ id: job.id, data: job.data, retryCount: job.retryCount })),
        );
        // The failed ones go back to the queue (retry) now; pg-boss completes the rest, and only
        // jobs still active, when this returns.
        for (const [i, outcome] of outcomes.entries()) {
          if (outcome.status === 'rejected') {
            await boss.fail(name, jobs[i].id, { message: jobFailure(outcome.reason).message });
          }
        }
      },
    );
  }
}

/**
 * What pg-boss stores of a failed job: the message only, as well-formed text. pg-boss writes the
 * error it is given into a jsonb column; a driver error carries the failed statement's details, and
 * a lone surrogate in them made that write fail too, leaving the job active (and its import
 * `running`) until it expired.
 */
export function jobFailure(reason: unknown): Error {
  const message = reason instanceof Error ? reason.message : String(reason);
  return new Error(toWellFormedText(message));
}
