import { randomBytes } from 'node:crypto';

/**
 * JSON text read from the database and answered as it is: a run's environment snapshot (62 KB for
 * a 200-node topology) is selected as text (`environment_snapshot::text`) and spliced into the
 * response instead of being parsed into objects and serialised again (about 0.4 ms of CPU per
 * snapshot; 50 of them on a list page).
 *
 * Outside {@link stringifyWithRawJson} (any other `JSON.stringify`), a RawJson serialises as its
 * parsed value, so it is safe wherever a DTO travels.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    if (collecting === null) return JSON.parse(this.text) as unknown;
    collecting.push(this.text);
    return `${MARK}${collecting.length - 1}`;
  }
}

/**
 * A marker no stored string can contain: it starts with U+0000, which PostgreSQL refuses in text
 * and jsonb, followed by a per-process random nonce.
 */
const NONCE = randomBytes(8).toString('hex');
const MARK = `\u0000${NONCE}:`;
/** The marker as JSON.stringify writes it: a string literal with U+0000 escaped. */
const MARK_RE = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

/** The raw texts of the RawJson values met by the JSON.stringify call in progress (synchronous). */
let collecting: string[] | null = null;

/**
 * The JSON text of `value` in parts, each {@link RawJson} inside being one part of its own:
 * `[json]` without RawJson, else `[text, raw, text, raw, …, text]`. `parts.join('')` is the JSON.
 */
export function jsonParts(value: unknown): string[] {
  const raws: string[] = [];
  collecting = raws;
  let json: string;
  try {
    json = JSON.stringify(value);
  } finally {
    collecting = null;
  }
  if (raws.length === 0) return [json];
  // With its capturing group, split leaves each marker's index at the odd positions.
  const parts = json.split(MARK_RE);
  for (let i = 1; i < parts.length; i += 2) parts[i] = raws[Number(parts[i])] ?? 'null';
  return parts;
}

/** `JSON.stringify(value)`, with every {@link RawJson} inside written as its text. */
export function stringifyWithRawJson(value: unknown): string {
  return jsonParts(value).join('');
}

/**
 * Raw JSON text from this size on is written to the socket as it is, not joined into one string
 * and copied into one Buffer first: a run's 62 KB snapshot (3 MB for a page of 50) would otherwise
 * be copied twice per response, and the garbage collector pay for both copies.
 */
export const STREAM_RAW_JSON_FROM = 16 * 1024;

/** True when `parts` ({@link jsonParts}) carry enough raw JSON to be written part by part. */
export function writesInParts(parts: readonly string[]): boolean {
  let raw = 0;
  for (let i = 1; i < parts.length; i += 2) raw += parts[i].length;
  return raw >= STREAM_RAW_JSON_FROM;
}

/** The UTF-8 byte length of the JSON that `parts` spell (its Content-Length). */
export function byteLengthOfParts(parts: readonly string[]): number {
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part, 'utf8');
  return length;
}

/** A response the parts are written to (its headers already set). */
interface PartsSink {
  cork(): void;
  write(chunk: string, encoding: BufferEncoding): boolean;
  end(): unknown;
}

/** Writes `parts` and ends the response: corked, so one writev (`end()` uncorks). */
export function writeParts(res: PartsSink, parts: readonly string[]): unknown {
  res.cork();
  for (const part of parts) res.write(part, 'utf8');
  return res.end();
}

/** The part of an Express response `installRawJsonResponses` uses. */
interface JsonResponse extends PartsSink {
  req: { method: string };
  statusCode: number;
  get(field: string): string | undefined;
  set(field: string, value: string): unknown;
  send(body: string): unknown;
  setHeader(field: string, value: string | number): unknown;
}

/**
 * Makes `res.json` of this Express application splice {@link RawJson} values (Nest answers
 * controller results with `res.json`). Otherwise it does what Express's does without the
 * `json replacer` / `json spaces` / `json escape` settings, which this service does not use.
 * A body carrying at least {@link STREAM_RAW_JSON_FROM} characters of raw JSON is written in its
 * parts (Content-Length and charset set as `res.send` would; no body for HEAD).
 */
export function installRawJsonResponses(app: { response: object }): void {
  Object.defineProperty(app.response, 'json', {
    configurable: true,
    writable: true,
    value: function json(this: JsonResponse, body: unknown): unknown {
      const parts = jsonParts(body);
      if (this.get('Content-Type') === undefined) this.set('Content-Type', 'application/json');
      if (!writesInParts(parts) || this.statusCode === 204 || this.statusCode === 304) {
        return this.send(parts.join(''));
      }
      const type = this.get('Content-Type') as string;
      if (!/;\s*charset=/i.test(type)) this.set('Content-Type', `${type}; charset=utf-8`);
      this.setHeader('Content-Length', byteLengthOfParts(parts));
      if (this.req.method === 'HEAD') return this.end();
      return writeParts(this, parts);
    },
  });
}
