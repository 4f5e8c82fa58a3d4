import { Client } from 'pg';

const TRANSACTION_CONTROL = /^\s*(START TRANSACTION|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)/i;
/** The job queue's own statements (workers polling, maintenance): not part of any request. */
const JOB_QUEUE = /\bpgboss\./;

/** A statement as the service sent it: its text and its parameters. */
export interface SentStatement {
  sql: string;
  values: unknown[];
}

/**
 * The SQL statements PostgreSQL receives while `fn` runs, counted at the driver (pg's
 * `Client.prototype.query`), so reads on the pool, named prepared statements and TypeORM's query
 * runner are all seen. Transaction control and the job queue's polling are left out. Fails when nothing was seen at all (a
 * count of zero would mean the spy missed the service's statements, not that there were none).
 * `statements` are their texts, `sent` the same statements with their parameters.
 */
export async function statementsDuring<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; statements: string[]; sent: SentStatement[] }> {
  const spy = jest.spyOn(Client.prototype, 'query');
  try {
    const result = await fn();
    const sent = spy.mock.calls
      .map(([q, v]): SentStatement =>
        typeof q === 'string'
          ? { sql: q, values: Array.isArray(v) ? (v as unknown[]) : [] }
          : {
              sql: String((q as { text?: unknown }).text ?? ''),
              values: (q as { values?: unknown[] }).values ?? [],
            },
      )
      .filter(({ sql }) => !TRANSACTION_CONTROL.test(sql) && !JOB_QUEUE.test(sql));
    expect(sent.length).toBeGreaterThan(0);
    return { result, statements: sent.map((s) => s.sql), sent };
  } finally {
    spy.mockRestore();
  }
}

/**
 * Runs `fn` and, once, `between` right after PostgreSQL has answered the first statement whose
 * text matches `pattern` and before its caller sees the answer: a change committed between two
 * statements of one request (or a lock taken there). Both forms of pg's `Client.prototype.query`
 * (promise and callback, as the pool uses it) are held. Answers `fn`'s result and what `between`
 * answered (undefined when no statement matched).
 */
export async function withStepAfterStatement<T, B>(
  pattern: RegExp,
  between: () => PromiseLike<B>,
  fn: () => PromiseLike<T>,
): Promise<{ result: T; between: B | undefined }> {
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  let matched = false;
  let step: PromiseLike<B> | undefined;
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (
    this: Client,
    ...args: unknown[]
  ) {
    const first = args[0] as string | { text?: string };
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    if (matched || !pattern.test(text)) return query.apply(this, args);
    matched = true;
    const done = args[args.length - 1];
    if (typeof done === 'function') {
      args[args.length - 1] = (err: unknown, rows: unknown) => {
        const resume = () => (done as (e: unknown, r: unknown) => void)(err, rows);
        step = between();
        step.then(resume, resume);
      };
      return query.apply(this, args);
    }
    return (query.apply(this, args) as Promise<unknown>).then(async (rows) => {
      step = between();
      await step;
      return rows;
    });
  } as never);
  try {
    const result = await fn();
    return { result, between: await step };
  } finally {
    spy.mockRestore();
  }
}
