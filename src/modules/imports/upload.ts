/**
 * Multipart upload of test reports, streamed straight into their readers (CONTRACT §6, issue #18 §2).
 *
 * multer reads the `multipart/form-data` body with a custom storage engine: each `file` part (one or
 * more; MAX_UPLOAD_FILES at most, 413 `too_many_files` beyond) is decompressed as a stream when it
 * starts with the gzip magic bytes, then hashed (SHA-256) and counted as it arrives, and its format
 * sniffed from the first significant character (`report-format.ts`): a JUnit XML report is piped
 * into the streaming sax parser (never buffered whole); a Karvio results JSON report is decoded as
 * UTF-8 into one text as it arrives (the bytes are not kept) and parsed once complete; anything else
 * is only counted. A background import gives another sink per part (`upload-store.ts`: chunks for
 * PostgreSQL). MAX_UPLOAD_BYTES holds for the decompressed bytes of all parts together: the upload
 * is refused (413) as soon as they pass it; a request whose declared Content-Length is already
 * beyond what the limits allow is refused before anything is read.
 *
 * Parse failures are not thrown here: they are recorded and the rest of the part is still consumed
 * (for the size limit and the hash), so that the service decides in the contract's order what to
 * answer (request shape → run state → gzip → empty upload → unsupported format → invalid report).
 */
import { createHash } from 'node:crypto';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { Request } from 'express';
import multer from 'multer';
import { AppException, FormRefusal } from '../../common/errors/app-exception';
import { maxBodyBytes, type UploadLimits } from '../../common/http/body-limits';
import { createBodyDecoder, requestContentCoding } from '../../common/http/content-encoding';
import { cutText } from '../../common/normalize';
import { JunitParseError, parseJunit, type ParsedReport } from './junit/junit-parser';
import { addMissingFilename } from './multipart-filename';
import { RUN_METADATA_FORM_VALUES_MAX } from './run-metadata-form';
import { FormatSniffer, type SniffedFormat } from './report-format';
import { parseResultsJson, ResultsJsonError, Utf8Text } from './results-json/results-json';

export {
  MULTIPART_OVERHEAD_BYTES,
  PART_OVERHEAD_BYTES,
  maxBodyBytes,
  type UploadLimits,
} from '../../common/http/body-limits';

/** Name of the part that carries the report. */
export const FILE_PART = 'file';
/** Form fields accepted next to the file. */
export const FORM_FIELDS = ['dry_run', 'create_missing_cases'] as const;
/** File name recorded for a JUnit XML report sent without one (reference §4.2). */
export const DEFAULT_FILE_NAME = 'junit.xml';
/** File name recorded for a results JSON report sent without one (reference §4.2). */
export const DEFAULT_JSON_FILE_NAME = 'report.json';
/**
 * Placeholder given to a `file` part sent without a filename (multer ignores such parts); replaced
 * by the default of the sniffed format once the content is known.
 */
const MISSING_FILE_NAME = '.tms-upload-without-filename';

export type ReportParseError = JunitParseError | ResultsJsonError;

export interface UploadedReport {
  /**
   * Client file name (base name, at most 255 characters); when none was given `junit.xml`, or
   * `report.json` for a results JSON report.
   */
  fileName: string;
  /** False when the client gave no file name (`fileName` is then the default). */
  fileNameGiven: boolean;
  /** The client's base name as given ('' when none). */
  givenName: string;
  /** True when the part was gzip (its bytes were decompressed; size and SHA-256 are of the content). */
  gzip: boolean;
  /** Why a gzip part did not decompress (→ 422 `invalid_gzip`), else null. */
  gzipError: string | null;
  /** Content type of the part as sent, or null. */
  contentType: string | null;
  sizeBytes: number;
  /** Lowercase hex SHA-256 of the bytes of the part (decompressed when it was gzip). */
  sha256: string;
  /** True when the part is empty or holds only whitespace (a leading byte order mark included). */
  blank: boolean;
  /** Sniffed format (null when blank); `unsupported` → 422 `unsupported_report_format`. */
  format: SniffedFormat | null;
  /** The parsed report, or null when blank, unsupported or parsing failed (see `parseError`). */
  report: ParsedReport | null;
  parseError: ReportParseError | null;
}

export interface UploadForm {
  /** Text fields of the form (values as sent; repeated names give arrays). */
  fields: Record<string, unknown>;
  /** The `file` parts in request order (empty when there was none). */
  files: UploadedReport[];
}

/** The client's base name, or '' when it gave none. */
function givenName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop()?.trim() ?? '';
  return base === MISSING_FILE_NAME ? '' : base;
}

/** The recorded name of a file: the given base name, else the default of its format. */
export function baseName(name: string | undefined, format: SniffedFormat | null): string {
  const base = givenName(name);
  if (base === '') {
    return format === 'tms_results_json' ? DEFAULT_JSON_FILE_NAME : DEFAULT_FILE_NAME;
  }
  return cutText(base, 255);
}

/** What reading the bytes of a report gave. */
export interface ReadReport {
  format: SniffedFormat | null;
  report: ParsedReport | null;
  parseError: ReportParseError | null;
}

/** The reader of one sniffed format. */
interface FormatReader {
  /** Takes a chunk; a promise when the caller should wait before sending more (backpressure). */
  write(chunk: Buffer): Promise<void> | null;
  end(): Promise<{ report: ParsedReport | null; error: unknown }>;
  abort(): void;
}

/** JUnit XML: the bytes are piped into the streaming parser. */
function xmlReader(): FormatReader {
  const feed = new PassThrough();
  feed.on('error', () => undefined); // the parser may stop reading (and destroy it) early
  let parserDone = false;
  const parsing = parseJunit(feed).then(
    (report) => ({ report, error: null as unknown }),
    (error: unknown) => ({ report: null, error }),
  );
  void parsing.then(() => {
    parserDone = true;
  });
  return {
    write(chunk) {
      if (parserDone || feed.destroyed) return null;
      if (feed.write(chunk)) return null;
      // Wait until the parser takes more, or has stopped reading.
      return new Promise<void>((resolve) => {
        feed.once('drain', resolve);
        void parsing.then(() => resolve());
      });
    },
    end() {
      if (!feed.destroyed) feed.end();
      return parsing;
    },
    abort() {
      feed.destroy();
    },
  };
}

/** Results JSON: decoded into one text as it arrives (the bytes are not kept), parsed at the end. */
function jsonReader(): FormatReader {
  let text: Utf8Text | null = new Utf8Text();
  return {
    write(chunk) {
      text?.push(chunk);
      return null;
    },
    end() {
      const decoder = text;
      text = null;
      try {
        if (decoder === null) throw new Error('results JSON reader already ended');
        return Promise.resolve({ report: parseResultsJson(decoder.end()), error: null });
      } catch (error) {
        return Promise.resolve({ report: null, error });
      }
    },
    abort() {
      text = null;
    },
  };
}

/** Neither format: the bytes are only counted and hashed. */
function ignoringReader(): FormatReader {
  return {
    write: () => null,
    end: () => Promise.resolve({ report: null, error: null }),
    abort: () => undefined,
  };
}

/**
 * Sniffs the format from the first significant character and hands the bytes to the reader of that
 * format. Until the format is known (only whitespace and a byte order mark so far) the bytes are held
 * back and given to the reader first.
 */
export class ReportReader implements PartSink {
  private readonly sniffer = new FormatSniffer();
  private held: Buffer[] = [];
  private reader: FormatReader | null = null;

  write(chunk: Buffer): Promise<void> | null {
    if (this.reader !== null) return this.reader.write(chunk);
    this.held.push(chunk);
    const format = this.sniffer.push(chunk);
    if (format === null) return null;
    return this.start(format);
  }

  async end(): Promise<ReadReport> {
    if (this.reader === null) {
      const format = this.sniffer.end();
      if (format === null) {
        this.held = [];
        return { format: null, report: null, parseError: null };
      }
      await this.start(format);
    }
    const format = this.sniffer.format;
    const { report, error } = await (this.reader ?? ignoringReader()).end();
    if (
      error !== null &&
      !(error instanceof JunitParseError) &&
      !(error instanceof ResultsJsonError)
    ) {
      throw error instanceof Error ? error : new Error(String(error));
    }
    return { format, report, parseError: error };
  }

  abort(): void {
    this.held = [];
    this.reader?.abort();
  }

  /** Creates the reader and gives it the held bytes (the last write's backpressure is answered). */
  private start(format: SniffedFormat): Promise<void> | null {
    const reader =
      format === 'junit_xml'
        ? xmlReader()
        : format === 'tms_results_json'
          ? jsonReader()
          : ignoringReader();
    this.reader = reader;
    const held = this.held;
    this.held = [];
    let wait: Promise<void> | null = null;
    for (const chunk of held) {
      const next = reader.write(chunk);
      if (next !== null) wait = wait === null ? next : wait.then(() => next);
    }
    return wait;
  }
}

/** Where the (decompressed) bytes of one part go: the format's reader, or the stored upload. */
export interface PartSink {
  /** Takes a chunk; a promise when the caller should wait before sending more (backpressure). */
  write(chunk: Buffer): Promise<void> | null;
  end(): Promise<ReadReport>;
  abort(): void;
}

/** A sink per part (`index`: the part's position among the files, from 0). */
export type SinkFactory = (index: number) => PartSink;

/** The first bytes of a gzip stream (RFC 1952): a part starting with them is decompressed. */
export const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** True when `bytes` start like gzip. */
export function isGzip(bytes: Buffer): boolean {
  return (
    bytes.length >= GZIP_MAGIC.length && bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1]
  );
}

/**
 * multer storage engine: one part after another, each decompressed when it starts with the gzip
 * magic bytes (as a stream), hashed and counted (after decompression) while its sink reads it (the
 * {@link ReportReader} by default). The decompressed sizes of all parts together are held to
 * `maxBytes` (413 as soon as the sum passes it). One instance per request; the results are kept on
 * the instance, in part order.
 */
export class JunitStreamStorage implements multer.StorageEngine {
  readonly results: UploadedReport[] = [];
  /** Decompressed bytes of all parts so far. */
  totalBytes = 0;

  /** Called as soon as the parts grow past the size limit (before the rest of the body is read). */
  onLimit: (() => void) | null = null;

  private parts = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sinkFor: SinkFactory = () => new ReportReader(),
  ) {}

  _handleFile(
    _req: Request,
    file: Express.Multer.File,
    callback: (error?: Error | null, info?: Partial<Express.Multer.File>) => void,
  ): void {
    const index = this.parts++;
    const source = file.stream;
    const hash = createHash('sha256');
    const sink = this.sinkFor(index);
    let size = 0;
    let head: Buffer | null = Buffer.alloc(0);
    let gunzip: Gunzip | null = null;
    let gzipError: string | null = null;
    let over = false;
    let sourceEnded = false;
    let finished = false;

    const consume = (chunk: Buffer): Promise<void> | null => {
      if (over || gzipError !== null) return null;
      hash.update(chunk);
      size += chunk.length;
      this.totalBytes += chunk.length;
      if (this.totalBytes > this.maxBytes) {
        over = true;
        sink.abort();
        // Decompress no further (a gzip bomb costs no more CPU); the rest of the part is discarded.
        const z = gunzip;
        if (z !== null) {
          gunzip = null;
          z.removeAllListeners('data');
          z.destroy();
          source.resume();
        }
        this.onLimit?.();
        return null;
      }
      return sink.write(chunk);
    };
    const feed = (chunk: Buffer): void => {
      if (gunzip !== null) {
        if (gzipError === null && !gunzip.write(chunk)) {
          source.pause();
          gunzip.once('drain', () => source.resume());
        }
        return;
      }
      const wait = consume(chunk);
      if (wait !== null) {
        source.pause();
        void wait.then(() => source.resume());
      }
    };
    const finish = (): void => {
      if (finished) return;
      finished = true;
      const base = {
        fileNameGiven: givenName(file.originalname) !== '',
        givenName: givenName(file.originalname),
        contentType: file.mimetype ? file.mimetype : null,
        sizeBytes: size,
        sha256: hash.digest('hex'),
        gzip: gunzip !== null,
        gzipError,
      };
      const read: Promise<ReadReport> =
        over || gzipError !== null
          ? Promise.resolve({ format: null, report: null, parseError: null })
          : sink.end();
      read.then(
        (r) => {
          this.results[index] = {
            ...base,
            fileName: baseName(file.originalname, r.format),
            blank: r.format === null,
            format: r.format,
            report: r.report,
            parseError: r.parseError,
          };
          callback(null, { size });
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    };
    const startGunzip = (): void => {
      const z = createGunzip();
      gunzip = z;
      z.on('data', (chunk: Buffer) => {
        const wait = consume(chunk);
        if (wait !== null) {
          z.pause();
          void wait.then(() => z.resume());
        }
      });
      z.once('end', finish);
      z.once('error', (error: Error) => {
        gzipError = `not a valid gzip stream: ${error.message}`;
        sink.abort();
        source.resume();
        if (sourceEnded) finish();
      });
    };

    source.on('data', (chunk: Buffer) => {
      if (head !== null) {
        // The first two bytes decide whether the part is gzip.
        head = Buffer.concat([head, chunk]);
        if (head.length < GZIP_MAGIC.length) return;
        const first = head;
        head = null;
        if (isGzip(first)) startGunzip();
        feed(first);
        return;
      }
      feed(chunk);
    });
    source.once('limit', () => this.onLimit?.());
    source.once('error', (error: Error) => {
      sink.abort();
      gunzip?.destroy();
      callback(error);
    });
    source.once('end', () => {
      sourceEnded = true;
      if (head !== null) {
        const rest = head;
        head = null;
        if (rest.length > 0) feed(rest);
      }
      if (gunzip !== null && gzipError === null) gunzip.end();
      else finish();
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
function uploadProblem(error: unknown, limits: UploadLimits): AppException | unknown {
  const maxBytes = limits.maxBytes;
  const e = (error ?? {}) as MulterLikeError;
  const code = typeof e.code === 'string' ? e.code : '';
  const field = typeof e.field === 'string' && e.field !== '' ? e.field : null;
  switch (code) {
    case 'LIMIT_FILE_SIZE':
      return new AppException(
        'payload_too_large',
        `The uploaded files are larger than the limit of ${maxBytes} bytes (after decompression)`,
      );
    case 'LIMIT_FILE_COUNT':
      return new AppException(
        'too_many_files',
        `An import takes at most ${limits.maxFiles} files (MAX_UPLOAD_FILES)`,
      );
    case 'LIMIT_UNEXPECTED_FILE':
      return FormRefusal.of({
        [field ?? 'body']: ['Unknown field; the report goes in the "file" part'],
      });
    case 'LIMIT_FIELD_VALUE':
      return FormRefusal.of({ [field ?? 'body']: ['Field value too long'] });
    case 'LIMIT_PART_COUNT':
    case 'LIMIT_FIELD_COUNT':
    case 'LIMIT_FIELD_KEY':
    case 'LIMIT_FIELD_NESTING':
    case 'LIMIT_FIELD_ARRAY_INDEX':
    case 'MISSING_FIELD_NAME':
    case 'INVALID_FIELD_NAME':
      return FormRefusal.of({
        body: [`Unacceptable multipart body: ${String(e.message ?? code)}`],
      });
    default:
      break;
  }
  if (
    error instanceof Error &&
    /multipart|boundary|unexpected end of form|malformed part header/i.test(error.message)
  ) {
    return FormRefusal.of({ body: [`Malformed multipart body: ${error.message}`] });
  }
  return error;
}

/**
 * Reads the multipart body of an import request: each `file` part streamed (decompressed when it is
 * gzip) into its sink — by default the parser of its format —, the text fields collected. Throws 413
 * `payload_too_large` once the files' decompressed bytes pass `maxBytes`, 413 `too_many_files` past
 * `maxFiles` parts, 422 for a malformed multipart body or unexpected parts. No `file` part is not an
 * error here (`files: []`).
 */
export async function readJunitUpload(
  req: Request,
  limits: UploadLimits,
  sinkFor?: SinkFactory,
): Promise<UploadForm> {
  const maxBytes = limits.maxBytes;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBodyBytes(limits)) {
    throw new AppException(
      'payload_too_large',
      `The request body (${declared} bytes) is larger than the upload limit of ${maxBytes} bytes`,
    );
  }
  const storage = new JunitStreamStorage(maxBytes, sinkFor);
  const feed = bodyFeed(req, maxBodyBytes(limits));
  const options: MulterOptions = {
    storage,
    defParamCharset: 'utf8',
    limits: {
      fileSize: maxBytes,
      files: limits.maxFiles,
      // A client that sends the report as a plain form field named `file` (no filename, e.g.
      // `.attach('file', buffer)` in superagent) is served too: the field may be as large as a file.
      // Plus the run metadata fields (issue #24: build, ci_*, up to 50 `attribute`).
      fields: 4 + RUN_METADATA_FORM_VALUES_MAX,
      fieldSize: maxBytes,
      fieldNameSize: 100,
      parts: limits.maxFiles + 12 + RUN_METADATA_FORM_VALUES_MAX,
      headerPairs: 50,
    },
    streamHandler: feed.start,
  };
  const upload = multer(options).array(FILE_PART);
  const res = req.res;
  if (res === undefined) throw new Error('readJunitUpload: request has no response object');
  await new Promise<void>((resolve, reject) => {
    // Over the limit: answer 413 at once; multer keeps discarding the rest of the body meanwhile.
    storage.onLimit = () => reject(uploadProblem({ code: 'LIMIT_FILE_SIZE' }, limits));
    upload(req, res, (error?: unknown) => {
      // multer is done with the body (on an error, once the request was read to its end).
      feed.stop();
      if (error === undefined || error === null) resolve();
      else reject(uploadProblem(error, limits));
    });
  });
  const body: unknown = req.body;
  const fields: Record<string, unknown> =
    body !== null && typeof body === 'object' ? { ...(body as Record<string, unknown>) } : {};
  const textFile = fields[FILE_PART];
  if (storage.results.length === 0 && typeof textFile === 'string') {
    delete fields[FILE_PART];
    return {
      fields,
      files: [await reportFromText(textFile, (sinkFor ?? (() => new ReportReader()))(0))],
    };
  }
  return { fields, files: storage.results };
}

/**
 * multer's options with its documented `streamHandler` (multer's README: "Function that feeds the
 * request body to busboy; defaults to `req.pipe(busboy)`"), which its typings do not declare yet.
 */
type MulterOptions = multer.Options & {
  streamHandler?: (req: Request, busboy: Writable) => void;
};

/**
 * What multer's parser reads instead of the raw request body: request → decoder → `addMissingFilename`
 * → busboy, so a `file` part sent without a filename is still a file. A body with a
 * Content-Encoding (gzip, deflate, br; others were refused before routing) is decoded first
 * (`createBodyDecoder`: at most `maxDecodedBytes`; a body that does not decode fails the parser with
 * 400 `invalid_content_encoding`, an oversized one with 413). `start` is multer's `streamHandler`;
 * `stop` takes the pipeline off the request once multer is done (the request itself is left to
 * multer, which reads an unread rest to its end before it answers an error).
 */
function bodyFeed(
  req: Request,
  maxDecodedBytes: number,
): { start: (req: Request, busboy: Writable) => void; stop: () => void } {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(req.headers['content-type'] ?? '');
  const boundary = m?.[1] ?? m?.[2];
  const coding = requestContentCoding(req);
  let streams: Array<Readable | Writable> = [];
  return {
    start(source, busboy) {
      // Always through the decoder: with no Content-Encoding it only counts, so a body without a
      // Content-Length (chunked) is held to the same limit as a declared one (text fields included).
      const decoder = createBodyDecoder('coding' in coding ? coding.coding : null, maxDecodedBytes);
      // busboy refuses a body without a boundary before reading it; nothing to rename then.
      const fix = boundary
        ? addMissingFilename(boundary, FILE_PART, MISSING_FILE_NAME)
        : new PassThrough();
      streams = [decoder.input, decoder.output, fix];
      source.pipe(decoder.input);
      decoder.output.pipe(fix).pipe(busboy);
      // multer hears of a decoding failure or an oversized body through its parser, like of a
      // malformed body.
      decoder.output.once('error', (error) => busboy.destroy(error));
    },
    stop() {
      const [input] = streams;
      if (input !== undefined) req.unpipe(input as Writable);
      for (const stream of streams) stream.destroy();
      streams = [];
    },
  };
}

/** The same checks as the streamed path, for a report sent as a text field (buffered, ≤ the limit). */
async function reportFromText(text: string, sink: PartSink): Promise<UploadedReport> {
  let bytes: Buffer | null = Buffer.from(text, 'utf8');
  const sizeBytes = bytes.length;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  await sink.write(bytes);
  bytes = null; // the readers keep what they need
  const read = await sink.end();
  return {
    fileName: baseName(undefined, read.format),
    fileNameGiven: false,
    givenName: '',
    contentType: null,
    sizeBytes,
    sha256,
    gzip: false,
    gzipError: null,
    blank: read.format === null,
    format: read.format,
    report: read.report,
    parseError: read.parseError,
  };
}
