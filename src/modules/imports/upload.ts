/**
 * Multipart upload of a JUnit report, streamed straight into the parser (CONTRACT §6).
 *
 * multer reads the `multipart/form-data` body with a custom storage engine: the bytes of the `file`
 * part are hashed (SHA-256), counted, checked for blankness and piped into the streaming sax parser
 * as they arrive — the file is never buffered whole. multer's `fileSize` limit (MAX_UPLOAD_BYTES)
 * aborts the upload as soon as the part grows past the limit (413); a request whose declared
 * Content-Length is already beyond what the limit allows is refused before anything is read.
 *
 * Parse failures are not thrown here: they are recorded and the rest of the part is still consumed
 * (for the size limit and the hash), so that the service decides in the contract's order what to
 * answer (request shape → run state → empty upload → invalid XML).
 */
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Request } from 'express';
import multer from 'multer';
import { AppException } from '../../common/errors/app-exception';
import { JunitParseError, parseJunit, type ParsedReport } from './junit/junit-parser';
import { addMissingFilename } from './multipart-filename';

/** Room for the multipart framing and the few small form fields next to the file. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Name of the part that carries the report. */
export const FILE_PART = 'file';
/** Form fields accepted next to the file. */
export const FORM_FIELDS = ['dry_run', 'create_missing_cases'] as const;
export const DEFAULT_FILE_NAME = 'junit.xml';

export interface UploadedReport {
  /** Client file name (base name, at most 255 characters), `junit.xml` when none was given. */
  fileName: string;
  /** Content type of the part as sent, or null. */
  contentType: string | null;
  sizeBytes: number;
  /** Lowercase hex SHA-256 of the bytes of the part. */
  sha256: string;
  /** True when the part is empty or holds only whitespace (a leading UTF-8 BOM included). */
  blank: boolean;
  /** The parsed report, or null when parsing failed (see `parseError`). */
  report: ParsedReport | null;
  parseError: JunitParseError | null;
}

export interface UploadForm {
  /** Text fields of the form (values as sent; repeated names give arrays). */
  fields: Record<string, unknown>;
  /** The `file` part, or null when there was none. */
  file: UploadedReport | null;
}

/** Tracks whether any byte other than XML whitespace has been seen (a leading BOM excepted). */
class BlankTracker {
  private offset = 0;
  blank = true;

  push(chunk: Buffer): void {
    if (!this.blank) return;
    for (let i = 0; i < chunk.length; i++) {
      const position = this.offset + i;
      const byte = chunk[i];
      const bom =
        (position === 0 && byte === 0xef) ||
        (position === 1 && byte === 0xbb) ||
        (position === 2 && byte === 0xbf);
      if (bom) continue;
      if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) {
        this.blank = false;
        break;
      }
    }
    this.offset += chunk.length;
  }
}

function baseName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop()?.trim() ?? '';
  if (base === '') return DEFAULT_FILE_NAME;
  return base.length > 255 ? base.slice(0, 255) : base;
}

/**
 * multer storage engine: pipes the part into `parseJunit` while hashing and counting it. One
 * instance per request; the result is kept on the instance.
 */
export class JunitStreamStorage implements multer.StorageEngine {
  result: UploadedReport | null = null;

  /** Called as soon as the part grows past the size limit (before the rest of the body is read). */
  onLimit: (() => void) | null = null;

  _handleFile(
    _req: Request,
    file: Express.Multer.File,
    callback: (error?: Error | null, info?: Partial<Express.Multer.File>) => void,
  ): void {
    const source = file.stream;
    const hash = createHash('sha256');
    const blank = new BlankTracker();
    let size = 0;
    let parserDone = false;
    let waitingForDrain = false;
    const feed = new PassThrough();
    feed.on('error', () => undefined); // the parser may stop reading (and destroy it) early

    const parsing = parseJunit(feed).then(
      (report) => ({ report, error: null }),
      (error: unknown) => ({ report: null, error }),
    );
    void parsing.then(() => {
      parserDone = true;
      if (waitingForDrain) {
        waitingForDrain = false;
        source.resume();
      }
    });

    source.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
      blank.push(chunk);
      if (parserDone || feed.destroyed) return;
      if (!feed.write(chunk)) {
        waitingForDrain = true;
        source.pause();
        feed.once('drain', () => {
          if (!waitingForDrain) return;
          waitingForDrain = false;
          source.resume();
        });
      }
    });
    source.once('limit', () => this.onLimit?.());
    source.once('error', (error: Error) => {
      feed.destroy();
      callback(error);
    });
    source.once('end', () => {
      if (!feed.destroyed) feed.end();
      void parsing.then(({ report, error }) => {
        if (error !== null && !(error instanceof JunitParseError)) {
          callback(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        this.result = {
          fileName: baseName(file.originalname),
          contentType: file.mimetype ? file.mimetype : null,
          sizeBytes: size,
          sha256: hash.digest('hex'),
          blank: blank.blank,
          report,
          parseError: error,
        };
        callback(null, { size });
      });
    });
  }

  _removeFile(
    _req: Request,
    _file: Express.Multer.File,
    callback: (error: Error | null) => void,
  ): void {
    callback(null); // nothing is stored
  }
}

interface MulterLikeError {
  code?: unknown;
  field?: unknown;
  message?: unknown;
}

/** Turns multer / busboy failures into the contract's problems. */
function uploadProblem(error: unknown, maxBytes: number): AppException | unknown {
  const e = (error ?? {}) as MulterLikeError;
  const code = typeof e.code === 'string' ? e.code : '';
  const field = typeof e.field === 'string' && e.field !== '' ? e.field : null;
  switch (code) {
    case 'LIMIT_FILE_SIZE':
      return new AppException(
        'payload_too_large',
        `The uploaded file is larger than the limit of ${maxBytes} bytes`,
      );
    case 'LIMIT_UNEXPECTED_FILE':
      return field === FILE_PART
        ? AppException.validation({ file: ['Exactly one "file" part is accepted'] })
        : AppException.validation({
            [field ?? 'body']: ['Unknown field; the report goes in the "file" part'],
          });
    case 'LIMIT_FIELD_VALUE':
      return AppException.validation({ [field ?? 'body']: ['Field value too long'] });
    case 'LIMIT_PART_COUNT':
    case 'LIMIT_FIELD_COUNT':
    case 'LIMIT_FILE_COUNT':
    case 'LIMIT_FIELD_KEY':
    case 'LIMIT_FIELD_NESTING':
    case 'LIMIT_FIELD_ARRAY_INDEX':
    case 'MISSING_FIELD_NAME':
    case 'INVALID_FIELD_NAME':
      return AppException.validation({
        body: [`Unacceptable multipart body: ${String(e.message ?? code)}`],
      });
    default:
      break;
  }
  if (
    error instanceof Error &&
    /multipart|boundary|unexpected end of form|malformed part header/i.test(error.message)
  ) {
    return AppException.validation({ body: [`Malformed multipart body: ${error.message}`] });
  }
  return error;
}

/**
 * Reads the multipart body of an import request: the `file` part streamed into the parser, the
 * text fields collected. Throws 413 for a file over `maxBytes`, 422 for a malformed multipart body
 * or unexpected parts. A missing `file` part is not an error here (`file: null`).
 */
export async function readJunitUpload(req: Request, maxBytes: number): Promise<UploadForm> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD_BYTES) {
    throw new AppException(
      'payload_too_large',
      `The request body (${declared} bytes) is larger than the upload limit of ${maxBytes} bytes`,
    );
  }
  const storage = new JunitStreamStorage();
  const upload = multer({
    storage,
    defParamCharset: 'utf8',
    limits: {
      fileSize: maxBytes,
      // A client that sends the report as a plain form field named `file` (no filename, e.g.
      // `.attach('file', buffer)` in superagent) is served too: the field may be as large as a file.
      fields: 4,
      fieldSize: maxBytes,
      fieldNameSize: 100,
      parts: 12,
      headerPairs: 50,
    },
  }).single(FILE_PART);
  const res = req.res;
  if (res === undefined) throw new Error('readJunitUpload: request has no response object');
  const restore = passNamelessFileParts(req);
  await new Promise<void>((resolve, reject) => {
    // Over the limit: answer 413 at once; multer keeps discarding the rest of the body meanwhile.
    storage.onLimit = () => reject(uploadProblem({ code: 'LIMIT_FILE_SIZE' }, maxBytes));
    upload(req, res, (error?: unknown) => {
      if (error === undefined || error === null) resolve();
      else reject(uploadProblem(error, maxBytes));
    });
  }).finally(restore);
  const body: unknown = req.body;
  const fields: Record<string, unknown> =
    body !== null && typeof body === 'object' ? { ...(body as Record<string, unknown>) } : {};
  const textFile = fields[FILE_PART];
  if (storage.result === null && typeof textFile === 'string') {
    delete fields[FILE_PART];
    return { fields, file: await reportFromText(textFile) };
  }
  return { fields, file: storage.result };
}

/**
 * Routes the request body through `addMissingFilename` on its way to multer, so a `file` part sent
 * without a filename is still a file. Returns a function that undoes the patch.
 */
function passNamelessFileParts(req: Request): () => void {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(req.headers['content-type'] ?? '');
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return () => undefined;
  const fix = addMissingFilename(boundary, FILE_PART, DEFAULT_FILE_NAME);
  const pipe = req.pipe;
  const unpipe = req.unpipe;
  const patched = req as unknown as {
    pipe: (dest: NodeJS.WritableStream) => NodeJS.WritableStream;
    unpipe: (dest?: NodeJS.WritableStream) => unknown;
  };
  patched.pipe = (dest) => {
    pipe.call(req, fix);
    return fix.pipe(dest);
  };
  patched.unpipe = (dest) => {
    fix.unpipe(dest);
    return unpipe.call(req, fix);
  };
  return () => {
    req.pipe = pipe;
    req.unpipe = unpipe;
  };
}

/** The same checks as the streamed path, for a report sent as a text field (buffered, ≤ the limit). */
async function reportFromText(text: string): Promise<UploadedReport> {
  const bytes = Buffer.from(text, 'utf8');
  const blank = new BlankTracker();
  blank.push(bytes);
  let report: ParsedReport | null = null;
  let parseError: JunitParseError | null = null;
  if (!blank.blank) {
    try {
      report = await parseJunit(bytes);
    } catch (error) {
      if (!(error instanceof JunitParseError)) throw error;
      parseError = error;
    }
  }
  return {
    fileName: DEFAULT_FILE_NAME,
    contentType: null,
    sizeBytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    blank: blank.blank,
    report,
    parseError,
  };
}
