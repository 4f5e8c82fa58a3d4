/**
 * Rows for PostgreSQL's `COPY … FROM STDIN` in its text format (tab-separated columns, one line a
 * row, `\N` for NULL; backslash, newline, carriage return and tab escaped with a backslash). Values:
 * null/undefined → NULL; Date → ISO 8601 (UTC); string[] → a text[] literal; numbers, booleans and
 * strings as text. JSON columns take their JSON text as a string.
 */
export type CopyValue = string | number | boolean | Date | readonly string[] | null | undefined;

const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One field, escaped for the text format. */
export function copyField(v: CopyValue): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'string') return escapeText(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new RangeError(`not a finite number: ${v}`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (v instanceof Date) return v.toISOString();
  return escapeText(arrayLiteral(v));
}

/**
 * The COPY lines of `items`, made one at a time as they are read (for `Db.copyIn`: the rows of a
 * bulk load are then built while the database writes the ones before).
 */
export function* copyLines<T>(items: Iterable<T>, line: (item: T) => string): Generator<string> {
  for (const item of items) yield line(item);
}

/** One row (a line, with its newline). */
export function copyRow(values: readonly CopyValue[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += '\t';
    line += copyField(values[i]);
  }
  return line + '\n';
}

function escapeText(s: string): string {
  return SPECIAL.test(s) ? s.replace(SPECIALS, (c) => ESCAPES[c]) : s;
}

/** A text[] literal: every element double-quoted, `"` and `\` escaped inside. */
function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((e) => `"${e.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}
