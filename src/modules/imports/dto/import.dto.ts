import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { ProblemDto } from '../../../common/openapi/problem.dto';
import { CursorPageQueryDto } from '../../../common/pagination/cursor-query';
import { OptionalNotNull, QueryBool } from '../../../common/validation/decorators';
import { RUN_METADATA_FORM_SCHEMA } from '../run-metadata-form';

/** `dry_run` / `create_missing_cases` as query parameters (they may also come as form fields). */
export class JunitImportQueryDto {
  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description:
      'Preview only: match and count, write nothing at all (no case, no result, no import record). ' +
      '`true`/`false`/`1`/`0`; may also be sent as a form field of the same name.',
  })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  dry_run?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description:
      'Create a test case for every result that matches none (identity: the `automation_id` property, ' +
      'else `<classname>.<name>`), with suites from the suite path, and add matched cases missing from ' +
      'the run. `true`/`false`/`1`/`0`; may also be sent as a form field of the same name.',
  })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  create_missing_cases?: boolean;
}

export class ListImportsQueryDto extends CursorPageQueryDto {}

/** OpenAPI schema of the multipart body. */
export const JUNIT_UPLOAD_SCHEMA = {
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'array',
      items: { type: 'string', format: 'binary' },
      maxItems: 1000,
      description:
        'The reports, one `file` part each (issue #18 §2): JUnit XML (`<testsuites>` or `<testsuite>` root) ' +
        'or Karvio results JSON (an object with a `cases` array), told apart by the first character, mixed ' +
        'freely; all of them form one import. A part whose bytes start with the gzip magic bytes `1f 8b` ' +
        '(e.g. `TEST-x.xml.gz`) is decompressed as it streams. At most MAX_UPLOAD_FILES parts (default ' +
        '1000) → 413 `too_many_files` beyond; at most MAX_UPLOAD_BYTES (default 64 MiB) for all files ' +
        'together, counted after decompression → 413 `payload_too_large` beyond. XML is streamed into the ' +
        'parser, JSON read whole; a synchronous import never stores them (a background one keeps them ' +
        'in the database until its job ends).',
    },
    dry_run: { type: 'boolean', default: false, description: 'Same as the query parameter.' },
    create_missing_cases: {
      type: 'boolean',
      default: false,
      description: 'Same as the query parameter.',
    },
    ...RUN_METADATA_FORM_SCHEMA,
  },
};

export class ImportIssueDto {
  @ApiProperty({
    example: 'test_login_works',
    description:
      'Raw `name` of the testcase; for a testcase without a usable name, the name generated for it (its ' +
      'classname, else `(unnamed testcase N)`).',
  })
  testcase_name: string;
  @ApiProperty({ type: String, nullable: true, example: 'tests.auth.LoginTest' })
  testcase_classname: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'tests.auth.LoginTest.test_login_works' })
  automation_id: string | null;
  @ApiProperty({ example: 'no matching test case found' }) reason: string;
}

export class ImportCreatedCaseDto {
  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'null in a dry run' })
  id: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'TC-42', description: 'null in a dry run' })
  key: string | null;
  @ApiProperty({ example: 'test_login_works' }) title: string;
  @ApiProperty({ type: String, nullable: true }) automation_id: string | null;
  @ApiProperty({
    type: [String],
    example: ['tests', 'auth'],
    description: 'Suite path of the case (≤ 4 levels)',
  })
  suite_path: string[];
}

export class ImportTargetRunDto {
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'null when a dry run would create it',
  })
  id: string | null;
  @ApiProperty({ example: 'Nightly' }) name: string;
  @ApiProperty({ enum: ['existing', 'created'] }) match_mode: 'existing' | 'created';
}

/** One file of an import (`summary.files`). */
export class ImportFileSummaryDto {
  @ApiProperty({
    example: 'TEST-com.example.LoginTest.xml',
    description:
      'File name as sent (its default, `junit.xml` or `report.json`, when none was given)',
  })
  name: string;
  @ApiProperty({
    description: 'Tests of this file (repeated testcases of one test folded into one)',
  })
  testcases: number;
  @ApiProperty({ description: 'Final status passed (flaky ones included)' }) passed: number;
  @ApiProperty({ description: 'Final status failure, error or xpassed' }) failed: number;
  @ApiProperty({ description: 'Final status skipped or xfailed' }) skipped: number;
}

export class ImportSummaryDto {
  @ApiProperty({
    description: 'Tests in the report (repeated testcases of one test folded into one)',
  })
  total_cases: number;
  @ApiProperty({
    description:
      'Results matched to an existing case by automation id. Each case is counted once, under the way it ' +
      'was found or made: results that land on a case this import creates count in `created_test_cases` ' +
      'only (the reference counted them here too; issue #24 §8 decided otherwise).',
  })
  matched_by_automation_id: number;
  @ApiProperty({
    description:
      'Results matched to an existing case by suite path and title, or by title (see `matched_by_automation_id`).',
  })
  matched_by_name: number;
  @ApiProperty({
    description:
      'Cases created (dry run: cases that would be created); not also counted as matched',
  })
  created_test_cases: number;
  @ApiProperty({ description: 'Results written to run rows (0 in a dry run)' }) updated: number;
  @ApiProperty() unmatched: number;
  @ApiProperty() ambiguous: number;
  @ApiProperty({
    description:
      'Always 0: a real import applies completely or not at all (a failure is an error response)',
  })
  errors: number;
  @ApiProperty({
    description:
      'Testcases ignored: placed outside any testsuite (directly under `<testsuites>`). A testcase without a ' +
      'name is not ignored: it is imported under a generated name (see `warnings`).',
  })
  ignored: number;
  @ApiProperty({ description: 'Number of entries in `warnings`' })
  warnings: number;
  @ApiProperty({
    type: [ImportFileSummaryDto],
    description:
      'Each file of the import, in request order, with its own counts (a test present in two files is ' +
      'counted in both, and its last result wins on the row).',
  })
  files: ImportFileSummaryDto[];
}

export class ImportStatusCountsDto {
  @ApiProperty() passed: number;
  @ApiProperty() failure: number;
  @ApiProperty() error: number;
  @ApiProperty() skipped: number;
  @ApiProperty() xfailed: number;
  @ApiProperty() xpassed: number;
  @ApiProperty({ description: 'Passed after failed attempts (Surefire flaky, retries)' })
  flaky: number;
}

export class JunitImportDto {
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'Import record id; null for a dry run',
  })
  id: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'uuid' }) test_run_id: string | null;
  @ApiProperty({ type: ImportTargetRunDto }) target_run: ImportTargetRunDto;
  @ApiProperty({
    example: 'TEST-com.example.LoginTest.xml',
    description:
      'The file name; with several files, the first one (all are listed in `summary.files`)',
  })
  source_filename: string;
  @ApiProperty({ type: String, nullable: true, example: 'application/xml' }) source_content_type:
    | string
    | null;
  @ApiProperty({
    example: 2048,
    description:
      'Bytes of the file (of all files together), counted after decompression of gzip parts',
  })
  size_bytes: number;
  @ApiProperty({
    example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    description:
      'SHA-256 of the file (after decompression); with several files, the SHA-256 of their SHA-256 hex ' +
      'digests, each followed by a line feed, in request order',
  })
  sha256: string;
  @ApiProperty() dry_run: boolean;
  @ApiProperty({ enum: ['completed', 'partial', 'preview'] }) status:
    | 'completed'
    | 'partial'
    | 'preview';
  @ApiProperty({ type: ImportSummaryDto }) summary: ImportSummaryDto;
  @ApiProperty({
    type: ImportStatusCountsDto,
    description: 'Final statuses of the tests of the report',
  })
  statuses: ImportStatusCountsDto;
  @ApiProperty({ type: [ImportCreatedCaseDto] }) created_cases: ImportCreatedCaseDto[];
  @ApiProperty({ type: [ImportIssueDto] }) unmatched_cases: ImportIssueDto[];
  @ApiProperty({ type: [ImportIssueDto] }) ambiguous_cases: ImportIssueDto[];
  @ApiProperty({ type: [ImportIssueDto] }) error_cases: ImportIssueDto[];
  @ApiProperty({
    type: [ImportIssueDto],
    description:
      'Always empty, kept for compatibility: testcases without a name are no longer ignored but imported ' +
      'under a generated name and listed in `warnings` (issue #22).',
  })
  ignored_cases: ImportIssueDto[];
  @ApiProperty({
    type: [ImportIssueDto],
    description:
      'Tests of the report marked flaky: they passed after failed attempts (Surefire `flakyFailure`/' +
      '`flakyError`, or a retried testcase whose last attempt passed); the reason counts the attempts, ' +
      'which the row comment lists. Informational: they are applied like any other result.',
  })
  flaky_cases: ImportIssueDto[];
  @ApiProperty({
    type: [ImportIssueDto],
    description:
      'Results imported with a caveat, in report order. (1) A testcase without a usable name (no `name`, or an ' +
      'empty or blank one, as Surefire writes when a JUnit 5 `@BeforeAll` fails) is never dropped and never ' +
      'refuses the report: it is imported and counted like any other under a generated name: its `classname`, ' +
      'else `(unnamed testcase N)` (N counts such testcases of the same suite path, 1-based; a second one of the ' +
      'same classname gets `<classname> (unnamed testcase N)`). The name is stable, so importing the same report ' +
      'again matches the same cases; with no `automation_id` property it has no automation id and is matched by ' +
      'suite path and title. Reason `testcase without a name: imported under a generated name (line L)`. ' +
      '(2) A result whose text (message, failure body, output) was cut at 65,536 characters per text or ' +
      '16,777,216 per report; the stored text ends with `[truncated: N more characters not stored]`.',
  })
  warnings: ImportIssueDto[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** One recorded import, as listed by `GET /test-runs/{id}/imports`. */
export class JunitImportRecordDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ format: 'uuid' }) test_run_id: string;
  @ApiProperty({ example: 'junit.xml' }) file_name: string;
  @ApiProperty({ type: String, nullable: true }) content_type: string | null;
  @ApiProperty({ example: 2048 }) size_bytes: number;
  @ApiProperty() sha256: string;
  @ApiProperty({ enum: ['completed', 'partial'] }) status: string;
  @ApiProperty({ enum: ['existing', 'created'] }) match_mode: string;
  @ApiProperty({ type: ImportSummaryDto }) summary: ImportSummaryDto;
  @ApiProperty({ type: ImportStatusCountsDto }) statuses: ImportStatusCountsDto;
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ type: String, nullable: true }) created_by_name: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class ImportProgressDto {
  @ApiProperty({
    description:
      'Testcases handled so far: those that match nothing once the import is planned, then the applied ones ' +
      "as each batch of 1,000 is written (in the import's transaction: nothing is visible before it commits)",
  })
  processed: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Testcases of all files (repeated ones folded); null until the files are read',
  })
  total: number | null;
}

/** `GET /imports/{id}` and the 202 of a background import. */
export class ImportJobDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'The target run: given for a run import; for a project import null until applied',
  })
  test_run_id: string | null;
  @ApiProperty({
    enum: ['queued', 'running', 'succeeded', 'failed'],
    description:
      '`queued` (waiting for a worker), `running` (an attempt is under way; a retry after a crash starts ' +
      'again from the start), `succeeded` (applied, completely and once: `result`), `failed` (nothing ' +
      'applied: `problem`). A synchronous import is `succeeded` from the start.',
  })
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  @ApiProperty({ type: ImportProgressDto }) progress: ImportProgressDto;
  @ApiProperty({ example: 'TEST-com.example.LoginTest.xml' }) source_filename: string;
  @ApiProperty({ description: 'Bytes of all files (after decompression)' }) size_bytes: number;
  @ApiProperty() sha256: string;
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'Start of the latest attempt; null while queued',
  })
  started_at: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) finished_at: string | null;
  @ApiProperty({
    type: ImportSummaryDto,
    nullable: true,
    description: 'The counters of the import (with `files`) once it succeeded, else null',
  })
  summary: ImportSummaryDto | null;
  @ApiProperty({
    type: JunitImportDto,
    nullable: true,
    description: 'Once succeeded: the answer the synchronous import gives (same fields); else null',
  })
  result: JunitImportDto | null;
  @ApiProperty({
    type: ProblemDto,
    nullable: true,
    description:
      'Once failed: the problem that failed it, as the synchronous import would have answered it (e.g. 422 ' +
      '`invalid_junit_xml` naming the file, 409 `run_import_not_allowed`); 500 `internal_error` after ' +
      'IMPORT_JOB_RETRIES failed attempts. Else null.',
  })
  problem: Record<string, unknown> | null;
}
