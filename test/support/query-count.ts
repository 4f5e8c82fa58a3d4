import { Client } from 'pg';

const TRANSACTION_CONTROL = /^\s*(START TRANSACTION|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)/i;
/** The job queue's own statements (workers polling, maintenance): not part of any request. */
const JOB_QUEUE = /\bpgboss\./;

/**
 * The SQL statements PostgreSQL receives while `fn` runs, counted at the driver (pg's
 * `Client.prototype.query`), so reads on the pool, named prepared statements and TypeORM's query
 * runner are all seen. Transaction control and the job queue's polling are left out. Fails when nothing was seen at all (a
 * count of zero would mean the spy missed the service's statements, not that there were none).
 */
export async function statementsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const spy = jest.spyOn(Client.prototype, 'query');
  try {
    const result = await fn();
    const statements = spy.mock.calls
      .map(([q]) => (typeof q === 'string' ? q : String((q as { text?: unknown }).text ?? '')))
      .filter((sql) => !TRANSACTION_CONTROL.test(sql) && !JOB_QUEUE.test(sql));
    expect(statements.length).toBeGreaterThan(0);
    return { result, statements };
  } finally {
    spy.mockRestore();
  }
}
