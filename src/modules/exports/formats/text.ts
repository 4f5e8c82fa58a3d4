/** Helpers shared by the text export writers. */

const CHUNK_CHARS = 64 * 1024;

/** Groups many small strings into chunks of about 64 Ki characters (fewer, larger writes). */
export async function* chunked(source: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = '';
  for await (const part of source) {
    buffer += part;
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer !== '') yield buffer;
}

/** Characters XML 1.0 cannot carry at all; replaced by U+FFFD. */
const XML_FORBIDDEN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Escapes element text. */
export function xmlText(value: string): string {
  return value
    .replace(XML_FORBIDDEN, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** Escapes an attribute value (quotes with `"`; line breaks and tabs kept as references). */
export function xmlAttr(value: string): string {
  return xmlText(value)
    .replace(/"/g, '&quot;')
    .replace(/\r/g, '&#13;')
    .replace(/\n/g, '&#10;')
    .replace(/\t/g, '&#9;');
}

/**
 * Tag name from a key (reference §5.3): runs of characters other than letters, digits, `_` and `-`
 * become `_`, leading/trailing `_` are stripped, empty → `field`, a leading digit gets `field_`.
 */
export function xmlTagName(key: string): string {
  let tag = key.replace(/[^\p{L}\p{N}_-]+/gu, '_').replace(/^_+|_+$/g, '');
  if (tag === '') tag = 'field';
  if (/^[\p{N}-]/u.test(tag)) tag = `field_${tag}`;
  return tag;
}

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, line break or edge spaces. Text
 * that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage
 * return: a test title any tester or CI job chose) gets a leading `'`, which spreadsheets show as
 * text (OWASP's CSV injection advice); numbers stay numbers.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = Array.isArray(value) ? value.join(';') : String(value);
  if (typeof value !== 'number' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
