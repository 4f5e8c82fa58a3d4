import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JobQueue, QueuedJob } from '../../src/common/jobs/job-queue.service';
import { requestContext } from '../../src/common/persistence/request-context';
import { APP_CONFIG, AppConfig, loadConfig } from '../../src/config/config';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { TEST_AUTH_SECRET } from '../support/constants';
import { cloneTemplateDatabase } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/**
 * The job queue (pg-boss through JobQueue) on the real database, with two instances on one
 * database: a job sent in a transaction exists only if the transaction commits, each job runs on
 * exactly one instance, and a job whose instance stops mid-run is finished by the other.
 */

const QUEUE = 'test-echo';
/** A queue whose jobs always fail: they end in its dead-letter handler. */
const DOOMED = 'test-doomed';

/** What every instance's handler saw, shared by the instances of this file. */
const runs: Array<{ instance: string; id: string; value: number }> = [];
/** The jobs the dead-letter handler saw, by instance. */
const dead: Array<{ instance: string; value: number }> = [];
/** Attempts of doomed jobs. */
let doomedAttempts = 0;
/** Ends the blocking job's first attempt (called only after its instance stopped). */
let release: (() => void) | null = null;

interface EchoJob {
  value: number;
  block?: boolean;
  /** Fails its first attempt. */
  failOnce?: boolean;
}

@Injectable()
class EchoWorker implements OnModuleInit {
  constructor(
    private readonly queue: JobQueue,
    private readonly instance: string,
  ) {}

  onModuleInit(): void {
    this.queue.register<EchoJob>(
      QUEUE,
      { retryLimit: 3, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 60, batchSize: 5 },
      (job) => this.run(job),
    );
    this.queue.register<EchoJob>(
      DOOMED,
      { retryLimit: 1, retryDelaySeconds: 0, retryBackoff: false, expireInSeconds: 60 },
      () => {
        doomedAttempts += 1;
        return Promise.reject(new Error('always fails'));
      },
      async (job) => {
        dead.push({ instance: this.instance, value: job.data.value });
      },
    );
  }

  private async run(job: QueuedJob<EchoJob>): Promise<void> {
    if (job.data.block === true && job.retryCount === 0) {
      runs.push({ instance: `${this.instance}:started`, id: job.id, value: job.data.value });
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return; // this attempt's instance has stopped: it ends without a result of its own
    }
    if (job.data.failOnce === true && job.retryCount === 0) {
      runs.push({ instance: `${this.instance}:failed`, id: job.id, value: job.data.value });
      throw new Error('first attempt fails');
    }
    runs.push({ instance: this.instance, id: job.id, value: job.data.value });
  }
}

async function startInstance(databaseUrl: string, instance: string): Promise<INestApplicationContext> {
  const config: AppConfig = loadConfig(
    {
      AUTH_SECRET: TEST_AUTH_SECRET,
      DATABASE_URL: databaseUrl,
      JOB_POLL_INTERVAL_SECONDS: '0.5',
      LOG_LEVEL: 'silent',
    },
    { persistSecret: false },
  );
  @Module({
    imports: [TypeOrmModule.forRoot(dataSourceOptions(databaseUrl, { poolSize: 4, deadlines: config.db }))],
    providers: [
      { provide: APP_CONFIG, useValue: config },
      JobQueue,
      { provide: EchoWorker, useFactory: (queue: JobQueue) => new EchoWorker(queue, instance), inject: [JobQueue] },
    ],
  })
  class InstanceModule {}
  return NestFactory.createApplicationContext(InstanceModule, { logger: false });
}

/** Runs `fn` with a transaction open as a request's would be (JobQueue.send joins it). */
async function inTransaction(ctx: INestApplicationContext, fn: () => Promise<void>): Promise<void> {
  const dataSource = ctx.get(DataSource);
  await dataSource.transaction((manager) =>
    requestContext.run({ req: {} as never, manager, validated: new Map() }, fn),
  );
}

describe('JobQueue (pg-boss) on two instances', () => {
  let a: INestApplicationContext;
  let b: INestApplicationContext;
  const closed = new Set<INestApplicationContext>();

  beforeAll(async () => {
    const databaseUrl = await cloneTemplateDatabase();
    a = await startInstance(databaseUrl, 'a');
    b = await startInstance(databaseUrl, 'b');
  });

  afterAll(async () => {
    for (const ctx of [a, b]) if (!closed.has(ctx)) await ctx.close();
  });

  const jobCount = async (value: number): Promise<number> => {
    const rows: Array<{ n: number }> = await b
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND (data->>'value')::int = $2`, [
        QUEUE,
        value,
      ]);
    return rows[0].n;
  };

  it('runs every committed job exactly once across the two instances', async () => {
    const values = Array.from({ length: 20 }, (_, i) => 1000 + i);
    for (const value of values) await a.get(JobQueue).send(QUEUE, { value });
    await waitFor(() => values.every((v) => runs.some((r) => r.value === v)), {
      what: 'every job to run',
      timeoutMs: 20_000,
    });
    for (const value of values) {
      expect(runs.filter((r) => r.value === value)).toHaveLength(1);
    }
  });

  it('retries a failed job alone: the others of its batch complete once', async () => {
    const queue = a.get(JobQueue);
    await queue.send(QUEUE, { value: 4001, failOnce: true });
    for (const value of [4002, 4003, 4004]) await queue.send(QUEUE, { value });
    const done = (v: number) => runs.some((r) => r.value === v && !r.instance.includes(':'));
    await waitFor(() => [4001, 4002, 4003, 4004].every(done), { what: 'the batch and the retry' });
    expect(runs.filter((r) => r.value === 4001).map((r) => r.instance.endsWith(':failed'))).toEqual([
      true,
      false,
    ]);
    for (const value of [4002, 4003, 4004]) expect(runs.filter((r) => r.value === value)).toHaveLength(1);
  });

  it('hands a job that failed for good (its retries spent) to the dead-letter handler, once', async () => {
    await a.get(JobQueue).send(DOOMED, { value: 5001 });
    await waitFor(() => dead.some((d) => d.value === 5001), {
      what: 'the dead-letter handler',
      timeoutMs: 20_000,
    });
    expect(doomedAttempts).toBe(2); // the first attempt and its one retry
    expect(dead.filter((d) => d.value === 5001)).toHaveLength(1);
  });

    it('enqueues in the open transaction: a rollback leaves no job, a commit leaves one', async () => {
    await expect(
      inTransaction(a, async () => {
        await a.get(JobQueue).send(QUEUE, { value: 2001 });
        expect(await jobCount(2001)).toBe(0); // not visible outside the transaction yet
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await jobCount(2001)).toBe(0);

    await inTransaction(a, async () => {
      await a.get(JobQueue).send(QUEUE, { value: 2002 });
    });
    expect(await jobCount(2002)).toBe(1);
    await waitFor(() => runs.some((r) => r.value === 2002), { what: 'the committed job' });
    expect(runs.some((r) => r.value === 2001)).toBe(false);
  });

  it('hands a job whose instance stops mid-run to the other instance', async () => {
    await a.get(JobQueue).send(QUEUE, { value: 3001, block: true });
    await waitFor(() => runs.some((r) => r.value === 3001 && r.instance.endsWith(':started')), {
      what: 'the blocking job to start',
      timeoutMs: 20_000,
    });
    const first = runs.find((r) => r.value === 3001)!.instance.split(':')[0];
    const stopping = first === 'a' ? a : b;
    // The instance running it stops while the job still runs: after its grace period pg-boss fails
    // the job back to the queue (the pool must still be open then), and the other instance runs it.
    await stopping.close();
    closed.add(stopping);
    // The stopped instance's handler ends late: what it reports must go nowhere (the pool is
    // closed), and the job must still run to its end on the other instance, once.
    release?.();
    await waitFor(() => runs.some((r) => r.value === 3001 && !r.instance.endsWith(':started')), {
      what: 'the retried job to finish on the other instance',
      timeoutMs: 20_000,
    });
    const finished = runs.filter((r) => r.value === 3001 && !r.instance.endsWith(':started'));
    expect(finished).toHaveLength(1);
    expect(finished[0].instance).not.toBe(first);
  });
});
