import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { AppException } from '../../common/errors/app-exception';
import { JobQueue, QueuedJob } from '../../common/jobs/job-queue.service';
import { requestContext } from '../../common/persistence/request-context';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { ImportRepository } from './import.repository';
import {
  IMPORT_JOB,
  ImportJobData,
  importPath,
  ImportsService,
  ImportTarget,
  StoredImportRequest,
} from './imports.service';

/** Seconds before a failed attempt of a background import is retried (doubling each time). */
export const IMPORT_RETRY_DELAY_SECONDS = 1;

/**
 * Test seam of background imports (documented, for tests only; production leaves it empty):
 * `beforeCommit` is awaited inside the import's transaction once everything is written and the
 * record is marked `succeeded`, just before the commit. A test makes it wait, or fail, to play a
 * worker that dies in the middle of an import.
 */
@Injectable()
export class ImportJobHooks {
  beforeCommit: ((importId: string) => Promise<void>) | null = null;
}

/**
 * Runs background imports (issue #18 §3) on whichever instance's worker fetches the job first.
 *
 * An attempt marks the record `running` (progress reset), then, in ONE transaction, takes the
 * import's advisory lock, re-reads its state (an import already `succeeded` or `failed` is left
 * alone: a repeated or concurrent delivery does nothing), reads the stored files back, and runs
 * the same upload → plan → apply as a synchronous import; the record turns `succeeded` and the
 * stored files are deleted in that same transaction. So an attempt applies everything or nothing,
 * and a retry starts from the start.
 *
 * A refused import (4xx: an invalid file, a closed run) is marked `failed` with that problem (and
 * the webhook event `import.failed` emitted with the record) and not retried. Any other failure (a
 * lost connection, a crash) is retried by the job queue (IMPORT_JOB_RETRIES times, after
 * {@link IMPORT_RETRY_DELAY_SECONDS} s, doubling); the last one marks the import `failed` with 500
 * `internal_error`. An instance that dies mid-import loses its transaction (nothing applied); the
 * job queue hands the job to another instance once it expires (IMPORT_JOB_EXPIRE_SECONDS, plus up
 * to the queue's 2-minute maintenance interval). An attempt still running past the expiry is
 * retried as well: the retry waits for its transaction and then does nothing if it succeeded. When
 * the instance of the last attempt dies, the job goes to the dead-letter queue, whose handler
 * ({@link ImportJobRunner.abandoned}) marks the import `failed` and deletes its upload.
 */
@Injectable()
export class ImportJobRunner implements OnModuleInit {
  private readonly logger = new Logger('ImportJobRunner');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: JobQueue,
    private readonly repo: ImportRepository,
    private readonly imports: ImportsService,
    private readonly hooks: ImportJobHooks,
  ) {}

  onModuleInit(): void {
    this.jobs.register<ImportJobData>(
      IMPORT_JOB,
      {
        retryLimit: this.config.importJobs.retryLimit,
        retryDelaySeconds: IMPORT_RETRY_DELAY_SECONDS,
        retryBackoff: true,
        expireInSeconds: this.config.importJobs.expireInSeconds,
      },
      (job) => this.run(job),
      (job) => this.abandoned(job),
    );
  }

  /**
   * A job that failed for good: usually its last attempt already marked the import `failed`; when
   * the instance running that attempt died (the queue failed the job at its expiry), nobody did,
   * so the import would stay `running` with its upload stored. Marks it failed (500
   * `internal_error`, nothing applied: the dead attempt's transaction never committed) and deletes
   * the upload; does nothing for an import that ended.
   */
  async abandoned(job: QueuedJob<ImportJobData>): Promise<void> {
    const id = job.data.importId;
    const record = await this.repo.findImport(id);
    if (record === null || record.request === null) return;
    if (record.status === 'succeeded' || record.status === 'failed') return;
    this.logger.error(`background import ${id} was abandoned by its worker; marked failed`);
    await this.fail(
      id,
      record.project_id,
      record.request as unknown as StoredImportRequest,
      new AppException(
        'internal_error',
        'The import stopped before it finished (its last attempt was lost); nothing of it was applied',
      ),
    );
  }

  /** One attempt at a background import. */
  async run(job: QueuedJob<ImportJobData>): Promise<void> {
    const id = job.data.importId;
    const record = await this.repo.findImport(id);
    if (record === null || record.request === null) return; // gone (project or run deleted), or ended
    if (record.status === 'succeeded' || record.status === 'failed') return;
    const request = record.request as unknown as StoredImportRequest;
    if (!(await this.repo.markRunning(id))) return;
    try {
      await this.dataSource.transaction((manager) =>
        requestContext.run({ req: jobRequest(id, request), validated: new Map(), manager }, () =>
          this.apply(id, record.project_id, request),
        ),
      );
    } catch (error) {
      if (error instanceof AppException && error.status < 500) {
        await this.fail(id, record.project_id, request, error);
        return;
      }
      if (job.retryCount >= this.config.importJobs.retryLimit) {
        this.logger.error(`background import ${id} failed for good: ${String(error)}`);
        await this.fail(
          id,
          record.project_id,
          request,
          new AppException('internal_error', 'The import failed; nothing of it was applied'),
        );
      }
      throw error;
    }
  }

  /** Marks the import failed and emits `import.failed`, in a transaction of their own. */
  private async fail(
    id: string,
    projectId: string,
    request: StoredImportRequest,
    error: AppException,
  ): Promise<void> {
    await this.dataSource.transaction((manager) =>
      requestContext.run({ req: jobRequest(id, request), validated: new Map(), manager }, () =>
        this.imports.failImport(
          id,
          projectId,
          this.imports.problemBody(id, request.request_id, error),
        ),
      ),
    );
  }

  private async apply(id: string, projectId: string, request: StoredImportRequest): Promise<void> {
    const status = await this.repo.lockImport(id);
    if (status !== 'running' && status !== 'queued') return;
    const files = await this.imports.readStoredFiles(id, request);
    const target: ImportTarget =
      request.run_id !== null ? { runId: request.run_id } : { projectLevel: true };
    await this.imports.runImport(
      { projectId, role: request.access.role, isAdmin: request.access.is_admin },
      {
        id: request.user.id,
        username: request.user.username,
        displayName: request.user.display_name,
        isAdmin: request.user.is_admin,
        via: request.user.via,
      },
      target,
      files,
      {
        dryRun: false,
        createMissing: request.create_missing_cases,
        runMetadata: request.run_metadata,
      },
      { id, progress: (processed, total) => this.repo.setProgress(id, processed, total) },
    );
    await this.hooks.beforeCommit?.(id);
  }
}

/**
 * The request a background import's work runs under (services read the current request's store
 * for its transaction; logs its id): the import request's id, and the import's path.
 */
function jobRequest(id: string, request: StoredImportRequest): Request {
  const path = importPath(id);
  return {
    method: 'POST',
    url: path,
    originalUrl: path,
    headers: {},
    requestId: request.request_id,
  } as unknown as Request;
}
