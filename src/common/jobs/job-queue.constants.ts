/** PostgreSQL schema of the job queue's tables (pg-boss). */
export const JOB_QUEUE_SCHEMA = 'pgboss';
