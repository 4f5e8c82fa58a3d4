import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page';
import { OptionalNotNull, QueryBool } from '../../../common/validation/decorators';

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

export class ListImportsQueryDto extends PageQueryDto {}

/** OpenAPI schema of the multipart body. */
export const JUNIT_UPLOAD_SCHEMA = {
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      description:
        'The report: JUnit XML (`<testsuites>` or `<testsuite>` root) or Karvio results JSON (an object ' +
        'with a `cases` array), told apart by the first character. At most MAX_UPLOAD_BYTES ' +
        '(default 64 MiB) → 413 beyond. XML is streamed into the parser, JSON read whole; never stored.',
    },
    dry_run: { type: 'boolean', default: false, description: 'Same as the query parameter.' },
    create_missing_cases: {
      type: 'boolean',
      default: false,
      description: 'Same as the query parameter.',
    },
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

export class ImportSummaryDto {
  @ApiProperty({
    description: 'Tests in the report (repeated testcases of one test folded into one)',
  })
  total_cases: number;
  @ApiProperty() matched_by_automation_id: number;
  @ApiProperty() matched_by_name: number;
  @ApiProperty({ description: 'Cases created (dry run: cases that would be created)' })
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
  @ApiProperty({ example: 'TEST-com.example.LoginTest.xml' }) source_filename: string;
  @ApiProperty({ type: String, nullable: true, example: 'application/xml' }) source_content_type:
    | string
    | null;
  @ApiProperty({ example: 2048 }) size_bytes: number;
  @ApiProperty({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' })
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
