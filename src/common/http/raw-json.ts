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

/** `JSON.stringify(value)`, with every {@link RawJson} inside written as its text. */
export function stringifyWithRawJson(value: unknown): string {
  const parts: string[] = [];
  collecting = parts;
  let json: string;
  try {
    json = JSON.stringify(value);
  } finally {
    collecting = null;
  }
  if (parts.length === 0) return json;
  return json.replace(MARK_RE, (_marker, index: string) => parts[Number(index)] ?? 'null');
}

/** The part of an Express response `installRawJsonResponses` uses. */
interface JsonResponse {
  get(field: string): string | undefined;
  set(field: string, value: string): unknown;
  send(body: string): unknown;
}

/**
 * Makes `res.json` of this Express application splice {@link RawJson} values (Nest answers
 * controller results with `res.json`). Otherwise it does what Express's does without the
 * `json replacer` / `json spaces` / `json escape` settings, which this service does not use.
 */
export function installRawJsonResponses(app: { response: object }): void {
  Object.defineProperty(app.response, 'json', {
    configurable: true,
    writable: true,
    value: function json(this: JsonResponse, body: unknown): unknown {
      const text = stringifyWithRawJson(body);
      if (this.get('Content-Type') === undefined) this.set('Content-Type', 'application/json');
      return this.send(text);
    },
  });
}
