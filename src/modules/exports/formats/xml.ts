import { FAILURE_STATUSES, toFailure } from '../report';
import { publicItem, RunReportReader } from '../exports.repository';
import { xmlTagName, xmlText } from './text';

/** Fields written like Python floats (`50.0`), as in the reference export. */
const FLOAT_KEYS = new Set(['pass_rate', 'progress_rate']);

function scalar(key: string, value: string | number | boolean): string {
  if (typeof value === 'number' && FLOAT_KEYS.has(key) && Number.isInteger(value))
    return value.toFixed(1);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

/**
 * One value as an element (reference §5.3): objects → nested elements, arrays → a container whose
 * children are `<item>`, null → an empty element, scalars → text.
 */
export function xmlElement(key: string, value: unknown, depth: number): string {
  const pad = '  '.repeat(depth);
  const tag = xmlTagName(key);
  if (value === null || value === undefined) return `${pad}<${tag} />\n`;
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}<${tag} />\n`;
    return `${pad}<${tag}>\n${value.map((v) => xmlElement('item', v, depth + 1)).join('')}${pad}</${tag}>\n`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return `${pad}<${tag} />\n`;
    return `${pad}<${tag}>\n${entries.map(([k, v]) => xmlElement(k, v, depth + 1)).join('')}${pad}</${tag}>\n`;
  }
  return `${pad}<${tag}>${xmlText(scalar(key, value as string | number | boolean))}</${tag}>\n`;
}

async function* container<T>(name: string, values: AsyncIterable<T>): AsyncGenerator<string> {
  let open = false;
  for await (const value of values) {
    if (!open) {
      yield `  <${name}>\n`;
      open = true;
    }
    yield xmlElement('item', value, 2);
  }
  yield open ? `  </${name}>\n` : `  <${name} />\n`;
}

async function* map<T, U>(source: AsyncIterable<T>, fn: (value: T) => U): AsyncGenerator<U> {
  for await (const value of source) yield fn(value);
}

/** The report payload as XML under `<test_run_report>` (reference §5.3), streamed. */
export async function* xmlReport(reader: RunReportReader): AsyncGenerator<string> {
  const h = reader.header;
  yield "<?xml version='1.0' encoding='utf-8'?>\n<test_run_report>\n";
  yield xmlElement('report_type', 'test_run', 1);
  yield xmlElement('format_version', 1, 1);
  yield xmlElement('generated_at', h.generated_at, 1);
  yield xmlElement('test_run', h.test_run, 1);
  yield xmlElement('summary', h.summary, 1);
  yield xmlElement('by_status', h.by_status, 1);
  yield xmlElement('by_assignee', h.by_assignee, 1);
  yield* container(
    'failures',
    map(reader.items({ statuses: FAILURE_STATUSES }), (i) => toFailure(publicItem(i))),
  );
  yield* container('items', map(reader.items(), publicItem));
  yield '</test_run_report>\n';
}
