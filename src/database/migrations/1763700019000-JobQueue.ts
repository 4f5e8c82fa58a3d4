import PgBoss from 'pg-boss';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { JOB_QUEUE_SCHEMA } from '../../common/jobs/job-queue.constants';

/**
 * The job queue's tables (pg-boss, schema `pgboss`), created by pg-boss's own published plan so a
 * fresh database is ready before the first instance starts (pg-boss would create it at start too,
 * and migrates it on a later pg-boss upgrade). Down drops the schema with its jobs.
 */
export class JobQueue1763700019000 implements MigrationInterface {
  name = 'JobQueue1763700019000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(PgBoss.getConstructionPlans(JOB_QUEUE_SCHEMA));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP SCHEMA IF EXISTS ${JOB_QUEUE_SCHEMA} CASCADE`);
  }
}
