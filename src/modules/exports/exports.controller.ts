import { Controller, Get, Param, Req, StreamableFile } from '@nestjs/common';
import type { Request } from 'express';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromResource } from '../../common/access/project-access';
import { StreamedDownload } from '../../common/openapi/conditional-docs';
import { Query } from '../../common/validation/request-parts';
import { TEST_RUNS } from '../test-runs/test-runs.resource';
import { ExportQueryDto } from './dto/export.dto';
import { ExportsService } from './exports.service';
import { REPORT_JSON_SCHEMA } from './report-schema';

@ApiTags('exports')
@Controller('test-runs')
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  @Get(':id/export')
  @Endpoint({
    summary: 'Export a run report',
    description: [
      'A download (`Content-Disposition: attachment; filename="test-run-<id>-report.<ext>"`), streamed from one',
      'consistent snapshot of the run as it is read, so it carries no `ETag` and answers no 304. `format` (default `json`; anything else → 422 `query.format`):',
      '',
      '- `json` — the report payload: `report_type`, `format_version`, `generated_at`, `test_run`, `summary`',
      '  (with `untested`, `in_progress`, `pass_rate`, `progress_rate`), `by_status` (all nine statuses),',
      '  `by_assignee`, `failures` (items in error, failure or xpassed) and `items` (every run item, ordered by',
      '  case key; items whose case was deleted are kept with their snapshot data). Datetimes are ISO 8601 UTC.',
      '- `xml` — the same payload under `<test_run_report>`; lists are containers of `<item>`, null is an empty element.',
      '- `junit` — JUnit XML (`.xml`) with one testcase per row that has a result, which this service imports',
      '  again into the same cases and rows (title, suite path, automation id and row label are carried as',
      "  properties), by the import's matching rules: automation id, else suite path and title, else a title",
      '  that no other active case of the project has. A case with neither automation id nor suite whose title',
      '  other cases share comes back as `ambiguous` (the import does not match by case key).',
      '  `blocked` has no JUnit equivalent: it is written as `<skipped type="blocked">` and imports',
      '  back as skipped; `untested`/`in_progress` rows are left out.',
      '- `csv` — a header line and one line per run item (RFC 4180, CRLF, lists joined with `;`); text',
      "  starting with `=`, `+`, `-`, `@`, a tab or CR gets a leading `'` so that spreadsheets do not run it.",
      '  `bom=true` starts it with a UTF-8 byte order mark, for Excel.',
      '- `pdf` — a readable report: run fields, summary figures, status bar and pie charts, and the item table',
      '  over as many pages as needed. Text is set in DejaVu Sans (embedded): Latin with its extended letters,',
      '  Greek, Cyrillic, Armenian, Georgian and common symbols appear as written; characters the font lacks',
      '  (CJK, emoji) and right-to-left scripts (which the PDF writer would not reorder) appear as `?`.',
      '',
      'Each download holds one database connection of the instance while its client reads it; an instance reads',
      'at most `EXPORT_CONCURRENCY` downloads at once (default a quarter of its pool) and answers one more 503',
      '`service_unavailable` with `Retry-After`. A client that stops reading for longer than the idle-in-transaction',
      'timeout (`DB_IDLE_IN_TRANSACTION_TIMEOUT_MS`, 60 s) gets an incomplete transfer, never a complete-looking file.',
    ].join('\n'),
    minRole: 'viewer',
    project: fromResource(TEST_RUNS),
    problems: ['service_unavailable'],
    response: {
      content: {
        'application/json': { schema: REPORT_JSON_SCHEMA },
        'application/xml': { schema: { type: 'string', format: 'binary' } },
        'text/csv': { schema: { type: 'string', format: 'binary' } },
        'application/pdf': { schema: { type: 'string', format: 'binary' } },
      },
    },
    responseDescription: 'The report file',
    responseHeaders: {
      'Content-Disposition': {
        description: 'A download named after the run and the format',
        schema: { type: 'string', example: 'attachment; filename="test-run-<id>-report.csv"' },
      },
    },
  })
  @ApiProduces('application/json', 'application/xml', 'text/csv', 'application/pdf')
  @StreamedDownload()
  export(
    @Param('id') id: string,
    @Query() q: ExportQueryDto,
    @Req() req: Request,
  ): Promise<StreamableFile> {
    return req.method === 'HEAD'
      ? Promise.resolve(this.exports.exportHead(id, q.format))
      : this.exports.export(id, q.format, { bom: q.bom });
  }
}
