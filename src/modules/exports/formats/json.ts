import { FAILURE_STATUSES, toFailure } from '../report';
import { publicItem, RunReportReader } from '../exports.repository';

function indent(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

async function* array<T>(
  name: string,
  values: AsyncIterable<T>,
  last: boolean,
): AsyncGenerator<string> {
  yield `  "${name}": [`;
  let first = true;
  for await (const value of values) {
    yield `${first ? '\n' : ',\n'}${indent(JSON.stringify(value, null, 2), 4)}`;
    first = false;
  }
  yield `${first ? '' : '\n  '}]${last ? '\n' : ',\n'}`;
}

async function* map<T, U>(source: AsyncIterable<T>, fn: (value: T) => U): AsyncGenerator<U> {
  for await (const value of source) yield fn(value);
}

/**
 * The report payload of reference §5.2 as pretty-printed JSON (2 spaces), streamed: the header at
 * once, then failures and items as they come from the cursor.
 */
export async function* jsonReport(reader: RunReportReader): AsyncGenerator<string> {
  const h = reader.header;
  const head = JSON.stringify(
    {
      report_type: 'test_run',
      format_version: 1,
      generated_at: h.generated_at,
      test_run: h.test_run,
      summary: h.summary,
      by_status: h.by_status,
      by_assignee: h.by_assignee,
    },
    null,
    2,
  );
  yield `${head.slice(0, -2)},\n`;
  yield* array(
    'failures',
    map(reader.items({ statuses: FAILURE_STATUSES }), (i) => toFailure(publicItem(i))),
    false,
  );
  yield* array('items', map(reader.items(), publicItem), true);
  yield '}\n';
}
