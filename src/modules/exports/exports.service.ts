import { Inject, Injectable, Logger, StreamableFile } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Readable } from 'node:stream';
import { AppException } from '../../common/errors/app-exception';
import { ProblemFilter } from '../../common/errors/problem.filter';
import { canonicalId } from '../../common/persistence/ids';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { csvReport } from './formats/csv';
import { jsonReport } from './formats/json';
import { junitReport } from './formats/junit';
import { pdfReport } from './formats/pdf';
import { chunked } from './formats/text';
import { xmlReport } from './formats/xml';
import { ExportsRepository, RunReportReader } from './exports.repository';
import { ReportFormat } from './report';

/**
 * Content type and file extension per format. The download is always `test-run-<id>-report.<ext>`
 * (CONTRACT §6); a JUnit report is an XML document, so its extension is `xml` too.
 */
export const EXPORT_MEDIA: Record<ReportFormat, { type: string; ext: string }> = {
  json: { type: 'application/json; charset=utf-8', ext: 'json' },
  xml: { type: 'application/xml; charset=utf-8', ext: 'xml' },
  junit: { type: 'application/xml; charset=utf-8', ext: 'xml' },
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  pdf: { type: 'application/pdf', ext: 'pdf' },
};

/** The UTF-8 byte order mark a CSV download starts with on `bom=true`. */
export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Seconds a client is asked to wait when every download slot of the instance is taken. */
export const EXPORT_RETRY_AFTER_SECONDS = 5;

const TEXT_WRITERS: Record<
  Exclude<ReportFormat, 'pdf'>,
  (reader: RunReportReader) => AsyncGenerator<string>
> = {
  json: jsonReport,
  xml: xmlReport,
  junit: junitReport,
  csv: csvReport,
};

/** Run report export (CONTRACT §6, reference runs-imports-plans.md §5): streamed downloads. */
@Injectable()
export class ExportsService {
  private readonly logger = new Logger('ExportsService');
  /**
   * Downloads of this instance holding a pooled connection now. A download keeps its connection
   * (one snapshot) for as long as its client takes to read it; without a bound, as many paused
   * downloads as the pool has connections left every other request of the instance waiting for one
   * (503 `database_unavailable`). A bound of this instance's own pool, as the pool itself is.
   */
  private open = 0;

  constructor(
    private readonly reports: ExportsRepository,
    private readonly problems: ProblemFilter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A HEAD of a download: its headers, without opening the report (no snapshot, no slot; the guard
   * found the run). Opened and destroyed at once, a HEAD held its slot until its snapshot's COMMIT,
   * after its answer: a client's next download right after it was a false 503.
   */
  exportHead(runId: string, format: ReportFormat): StreamableFile {
    return this.download(runId, format, Readable.from([]));
  }

  async export(
    runId: string,
    format: ReportFormat,
    options: { bom?: boolean } = {},
  ): Promise<StreamableFile> {
    if (this.open >= this.config.exportConcurrency) {
      throw new AppException(
        'service_unavailable',
        `${this.config.exportConcurrency} report downloads are being read from this instance ` +
          '(EXPORT_CONCURRENCY); retry later',
        undefined,
        { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) },
      );
    }
    this.open++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.open--;
    };
    const reader = await this.reports.openRunReport(runId, release);
    if (reader === null) throw AppException.notFound('test_run_not_found', 'Test run');
    let stream: Readable;
    if (format === 'pdf') {
      stream = pdfReport(reader) as unknown as Readable;
    } else {
      const write = TEXT_WRITERS[format];
      // `bom=true` on a CSV: the UTF-8 byte order mark first, for Excel.
      const bom = options.bom === true && format === 'csv';
      stream = Readable.from(
        (async function* () {
          try {
            if (bom) yield UTF8_BOM;
            yield* chunked(write(reader));
          } finally {
            await reader.close();
          }
        })(),
        { objectMode: false },
      );
      // A stream destroyed before its first read never enters the generator: close the reader then.
      stream.once('close', () => void reader.close().catch(() => undefined));
    }
    return this.download(runId, format, stream);
  }

  /** The download of `stream` as `format`: its type, file name, and what a failure answers. */
  private download(runId: string, format: ReportFormat, stream: Readable): StreamableFile {
    const media = EXPORT_MEDIA[format];
    return new StreamableFile(stream, {
      type: media.type,
      // The run's id as the service writes it (lower case), whatever the path's spelling.
      disposition: `attachment; filename="test-run-${canonicalId(runId)}-report.${media.ext}"`,
    }).setErrorHandler((error, response) => {
      this.logger.error({ err: error, run_id: runId, format }, 'report export failed');
      const res = response as unknown as Response;
      if (res.headersSent) {
        res.destroy(error); // a cut download must not look complete
        return;
      }
      const problem = this.problems.toProblem(error, res.req as Request);
      res.status(problem.status);
      res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
      res.removeHeader('Content-Disposition');
      res.send(JSON.stringify(problem.body));
    });
  }
}
