import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiHeader,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromResource, PROJECTS, ProjectAccess } from '../../common/access/project-access';
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { Page } from '../../common/pagination/page';
import { CURSOR_PAGING_NOTE, PageOrCursorSchema } from '../../common/pagination/cursor-query';
import { CursorPage } from '../../common/pagination/keyset';
import { withNextLink } from '../../common/pagination/link';
import { JsonBody, sendJsonParts } from '../../common/http/json-body';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Query } from '../../common/validation/request-parts';
import { TEST_RUNS } from '../test-runs/test-runs.resource';
import {
  ImportJobDto,
  JUNIT_UPLOAD_SCHEMA,
  JunitImportDto,
  JunitImportQueryDto,
  JunitImportRecordDto,
  ListImportsQueryDto,
} from './dto/import.dto';
import { IMPORT_RETRY_DELAY_SECONDS } from './import-job';
import { IMPORTS } from './imports.resource';
import { ImportsService } from './imports.service';
import {
  DEFAULT_MAX_TEXT_CHARS,
  DEFAULT_MAX_TOTAL_TEXT_CHARS,
  MAX_JUNIT_ATTRIBUTE_CHARS,
  MAX_JUNIT_ATTRIBUTES_PER_ELEMENT,
  MAX_JUNIT_ELEMENT_DEPTH,
  MAX_JUNIT_ELEMENTS,
  MAX_JUNIT_PROPERTY_CHARS,
  MAX_JUNIT_SUITE_DEPTH,
  MAX_JUNIT_TESTCASES,
} from './junit/junit-parser';
import {
  MAX_RESULTS_JSON_DEPTH,
  MAX_RESULTS_JSON_FIELD_CHARS,
  MAX_RESULTS_JSON_VALUES,
} from './results-json/results-json';

const UPLOAD_RULES = [
  'Body: `multipart/form-data` with one or more parts `file` (the reports); `dry_run` and `create_missing_cases` as query',
  'parameters or form fields (`true`/`false`/`1`/`0`; both given and different → 422); run metadata form fields',
  '(issue #24: `build`, `ci_provider`, `branch`, `commit_sha`, `job_url`, `pipeline_id`, repeatable `attribute=key:value`;',
  'see the body schema). Other parts or fields → 422.',
  '',
  '**Many files in one import** (issue #18 §2): every `file` part of the request (JUnit XML and results JSON mixed',
  'freely, each sniffed on its own) forms ONE import: one transaction, one import record, one answer whose',
  '`summary.files` lists each file (`name`, `testcases`, `passed`, `failed`, `skipped`) in request order. The results of',
  'all files are matched and applied together (a test present in two files: the later result wins on the row). With',
  "several files `source_filename` is the first one, `size_bytes` the sum and `sha256` the SHA-256 of the files' SHA-256",
  'hex digests each followed by a line feed; a project import takes its run name from the first file (its report',
  'name, else its file name). One refused file refuses the whole import and nothing of the others is applied: the',
  'problem\'s `detail` names the file (`File "b.xml" (2 of 3) …`) and each message of `errors.file` starts with',
  '`<file name>: `. At most MAX_UPLOAD_FILES `file` parts (default 1000) → 413 `too_many_files`; MAX_UPLOAD_BYTES',
  '(default 64 MiB) holds for all files together → 413 `payload_too_large`.',
  '',
  '**gzip parts**: a part whose first bytes are the gzip magic bytes `1f 8b` (e.g. `TEST-a.xml.gz`) is decompressed as it',
  'streams (never whole in memory); MAX_UPLOAD_BYTES counts the decompressed bytes (413 as soon as they pass it, so a',
  'gzip bomb stops there); `size_bytes` and `sha256` are those of the decompressed content; a part that starts like gzip',
  'but does not decompress → 422 `invalid_gzip`. The name decides nothing (a plain file named `.gz` is read as it is).',
  '',
  `**Background imports** (issue #18 §3): with the header \`Prefer: respond-async\` the request is answered \`202 Accepted\``,
  'as soon as its body is read and stored, with `Location: /api/v1/imports/{id}`, `Preference-Applied: respond-async`',
  'and the import record (`ImportJobDto`) in state `queued`; `GET /api/v1/imports/{id}` follows it (`queued` → `running`',
  '→ `succeeded` with `result`, or `failed` with `problem`). Checked before the 202: the role and run (401/404/403,',
  '409 `run_import_not_allowed`), the form (422), the limits (413), gzip (422); the content of the files (empty,',
  'format, report) is checked by the job, and a refused file makes the import `failed` with the same problem the',
  'synchronous import answers. The files are stored (decompressed) in PostgreSQL in the transaction that records the',
  'import and enqueues its job (PostgreSQL job queue, pg-boss), and deleted when the job ends. The job runs on any',
  'instance and applies the whole import in one transaction that also marks it `succeeded`: all or nothing, never',
  'twice (a repeated delivery of a finished import does nothing). An instance that stops (SIGTERM) gives a running',
  'import 5 s, then hands it back to the queue for another instance. An instance that dies mid-import leaves nothing',
  'applied; the job is retried from the start by another instance once it expires (IMPORT_JOB_EXPIRE_SECONDS, default',
  '900, plus up to 2 minutes; an attempt still running then is retried too, and the retry waits for it and does',
  `nothing if it succeeded); unexpected failures are retried`,
  `IMPORT_JOB_RETRIES times (default 3, after ${IMPORT_RETRY_DELAY_SECONDS} s, doubling), then the import is \`failed\` (500 \`internal_error\`;`,
  'also when the instance running the last attempt dies: the job queue hands the job to a dead-letter handler).',
  'A dry run is never queued: with `dry_run=true` as a query parameter the preference is ignored and the preview',
  'answered at once; `dry_run=true` as a form field with the header → 422. Without the header the import is',
  'synchronous. With `Idempotency-Key` the stored answer is the 202 (status, `Location`, body), replayed as it was.',
  '',
  'Formats (reference §4.1), chosen from the content, never from the file name or content type: after leading',
  'whitespace and a byte order mark, `<` → JUnit XML, `{` or `[` → Karvio results JSON (below), anything else → 422',
  '`unsupported_report_format`. Beyond the reference, a UTF-16 byte order mark is recognised too (a UTF-16 XML report',
  'imports; a UTF-16 JSON report is refused as not UTF-8).',
  '',
  'JUnit XML — accepted: `<testsuites>` or `<testsuite>` roots, nested suites, properties on any level (`automation_id`,',
  '`tms_test_title`, `tms_suite_path`, `tms_steps`, `tms_preconditions`, `tms_assertions`: a created case\'s step holds',
  'the first 10,000 characters of steps and assertions, a step\'s limit), `system-out`/`system-err`,',
  'Maven Surefire `flakyFailure`/`flakyError` (final status passed, marked flaky: listed in `flaky_cases`, the',
  'attempts in the row comment) and `rerunFailure`/`rerunError` (final status of the primary element, reruns',
  'listed), pytest `skipped type="pytest.xfail"` → `xfailed` and `[XPASS(strict)]` failures → `xpassed`, repeated',
  "testcases of one test (retries) → one result with the last attempt's status (flaky when it passed last).",
  'Beyond the reference: on a testcase without an outcome element, a `status` attribute as GoogleTest, Catch2 and',
  'others write it (`disabled`, `notrun`, … → `skipped`; `failed` → `failure`; `errored` → `error`; `result="skipped"` too); the',
  "row comment is `message\\n\\ndetails`, or the message alone when the element's text only repeats it.",
  '',
  'Check order: 401 → query parameters (422) → the run/project and role (404, 403) → the body is read only then',
  '(so nothing is read for a caller who may not import) → form fields and `file` part (422) → run state (409) →',
  'empty file (422) → format (422) → report content (422).',
  '',
  'Refused, nothing changes: files over MAX_UPLOAD_BYTES → 413 `payload_too_large` (answered as soon as the limit',
  'is passed, before the rest of the body is read); no `file` part → 422 `validation_error` (`errors.file`); an empty or whitespace-only',
  'file → 422 `empty_upload`; any other first character than `<`, `{`, `[` (e.g. plain text) → 422',
  '`unsupported_report_format` (`errors.file`); malformed XML, a root other than a test suite, any DTD/DOCTYPE/entity',
  'declaration (entities are never expanded) → 422 `invalid_junit_xml` with the reason in `errors.file`.',
  '**Testcases without a name** (no `name`, or an empty or blank one — Surefire writes `name=""` when a JUnit 5',
  '`@BeforeAll` fails — with or without `classname`) are never dropped and never refuse the report: each is imported',
  'and counted under a stable generated name (its classname, else `(unnamed testcase N)`) and listed in `warnings`.',
  '',
  '**Limits** (issue #22; a report past one is refused with 422 `invalid_junit_xml`, the limit named in `errors.file`):',
  `\`<testsuite>\` nesting ${MAX_JUNIT_SUITE_DEPTH} levels; element nesting ${MAX_JUNIT_ELEMENT_DEPTH} levels; ${MAX_JUNIT_TESTCASES} \`<testcase>\` elements;`,
  `${MAX_JUNIT_ELEMENTS} elements of any kind; ${MAX_JUNIT_ATTRIBUTES_PER_ELEMENT} attributes per element; ${MAX_JUNIT_ATTRIBUTE_CHARS} characters per attribute`,
  'value (`name`, `classname`, `message`, …), attribute or element name, comment. Cut, not refused (the result is listed in',
  `\`warnings\`, the stored text ends with \`[truncated: N more characters not stored]\`): element text and \`message\` beyond`,
  `${DEFAULT_MAX_TEXT_CHARS} characters each and ${DEFAULT_MAX_TOTAL_TEXT_CHARS} per report; recognised property values beyond ${MAX_JUNIT_PROPERTY_CHARS} characters.`,
  'Properties other than the recognised ones are not read. Results JSON: nesting ' +
    `${MAX_RESULTS_JSON_DEPTH} levels, ${MAX_RESULTS_JSON_VALUES} values, ${MAX_JUNIT_TESTCASES} cases, ${MAX_RESULTS_JSON_FIELD_CHARS} characters per`,
  'string field other than `message`, `details`, `system_out`, `system_err` (those are cut like XML text) → 422 `invalid_tms_results_json`.',
  'Suite paths are read in their stored form: at most 4 levels (deeper ones folded into the 4th as `a / b`), 255',
  'characters per name.',
  '',
  'Karvio results JSON (reference §4.5): `{"run_name"?, "timestamp"?, "format"?, "version"?, "cases": [...]}`, unknown',
  'keys ignored (`format` and `version` are not checked). Each case: `name` (required, not blank), `status` (required:',
  '`passed`, `failure`, `error`, `skipped`, `xfailed` or `xpassed`), optional `title`, `classname`, `suite_path` (array of',
  'strings), `automation_id`, `preconditions`, `steps`, `assertions`, `dataset_key`, `dataset_name`, `dataset_data`',
  '(object), `dataset_source_ref`, `duration_ms`, `message`, `details`, `system_out`, `system_err`; strings are trimmed,',
  'blank → absent. A case is imported exactly like a testcase carrying the equivalent properties (`title` =',
  '`tms_test_title`, `suite_path` = `tms_suite_path`, `steps`/`preconditions`/`assertions` = `tms_steps`/…, `dataset_*` =',
  '`tms_dataset_*`), `message` and `details` being the message and text of its outcome element (row comment',
  '`message\\n\\ndetails`): same identity, matching, case creation and rows. `run_name` and `timestamp` play the part of',
  "the XML report's name and timestamp. Refused with 422 `invalid_tms_results_json`, every problem (at most 20) listed",
  'in `errors.file` as `<path>: <problem>` (e.g. `cases.2.status: …`): bytes that are not UTF-8 (a UTF-8 BOM is allowed),',
  'malformed JSON, a top-level value other than an object (an array included), `cases` missing, not an array or empty,',
  'a case that is not an object, a missing or blank `name`, a missing or unknown `status`, a field of the wrong type.',
  'Where the reference is silent: `status` must be written exactly (lowercase; surrounding spaces are trimmed);',
  '`timestamp` must be an ISO 8601 string (a number or an unparsable string is refused, while an unparsable XML',
  'timestamp is ignored); `duration_ms` must be a whole number from 0 to 2147483647; repeated cases of one test (same',
  'suite path, `automation_id`, `classname`, `name` and `dataset_key`) are retries folded into one result, as repeated',
  'XML testcases are; `message`, `details`, `system_out` and `system_err` are cut at 64 Ki characters each, as XML text',
  'is; a JSON report is read whole into memory (within MAX_UPLOAD_BYTES) before it is parsed, while XML is streamed. A',
  'file part without a filename is recorded as `report.json` (`junit.xml` for XML).',
  '',
  'Matching: `automation_id` (the property, else `<classname>.<name>`) → suite path + normalised title →',
  'normalised title, over the active cases of the project; ambiguous and unmatched results are listed.',
  'With `create_missing_cases`, unmatched results become new active, automated cases (key `TC-<n>`,',
  '`automation_id` = the identity above, tag `auto-imported`) in suites created from the suite path (at most 4',
  'levels; deeper levels are folded into the 4th as `a / b`), so importing the same report again creates nothing.',
  'Within one import, results with the same automation id share a created case, and a result without one takes',
  'the case created earlier under its suite path and title (with or without an id); in the other order, a result',
  'with an automation id takes the case created earlier without one under its suite path and title, which gets',
  'its id; results with different automation ids get a case each, even under one suite and title.',
  '',
  'Rows: each result is written to the row named by its label (`tms_dataset_name`/`tms_dataset_key` property, else',
  'the testcase name); when no row of the item has one of the labels and all its rows are still untouched (untested,',
  'never executed — e.g. the `Default scenario` row of a newly added case), those rows are taken over (relabelled',
  'in order, surplus untouched rows removed); otherwise a row is appended. Repeated results of one label: the last wins.',
  '`tms_dataset_*` properties only name the row: unlike the reference implementation (which looks for a bound',
  'dataset of that name, counts the result as unmatched without one, and creates and binds a dataset with',
  '`create_missing_cases`, even in dry runs), an import never creates datasets or bindings: a key such as',
  '`users:admin` addresses the row that the binding `users` generated for its row `admin`.',
  '',
  'A real import is one transaction: cases, suites, run items, rows (one row per result label; execution count',
  '+1, executed by the caller, finished now), item roll-ups, run counters, the run start',
  '(`not_started` → `in_progress`) and the import record are written together or not at all; the matched cases',
  'are held (not deleted or archived) until it commits, and one deleted or archived while the import read the',
  'report is unmatched (`matched test case was deleted or archived while the import ran`). A dry run writes',
  'nothing at all (no import record either) and answers the same summary with `status: "preview"`. An import',
  'writes no run-case history records (reference §4.10): the rows and the items hold the results; history',
  'records the changes made through the run-case endpoints.',
].join('\n');

const PREFER_DESCRIPTION =
  '`respond-async` (RFC 7240): run the import in the background — 202 with `Location: /api/v1/imports/{id}` ' +
  'and `Preference-Applied: respond-async`; other preferences are ignored.';

/** Headers of a background import's 202 (RFC 7240 `Preference-Applied`, the job's `Location`). */
const ACCEPTED_HEADERS = {
  Location: {
    description: 'The import record to follow: `/api/v1/imports/{id}`',
    schema: { type: 'string', example: '/api/v1/imports/01964a3e-7c1d-7b2a-9f00-5e1c2d3b4a59' },
  },
  'Preference-Applied': {
    description: 'The preference honoured',
    schema: { type: 'string', example: 'respond-async' },
  },
};

const ACCEPTED_DESCRIPTION =
  'With `Prefer: respond-async`: the import record in state `queued` (follow `Location`).';

@ApiTags('imports')
@ApiExtraModels(JunitImportRecordDto)
@Controller()
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  @Post('test-runs/:id/imports/junit')
  @Transactional()
  @Endpoint({
    summary: 'Import JUnit XML (or Karvio results JSON) results into a run',
    description: [
      UPLOAD_RULES,
      '',
      'Run-level specifics: a `completed` or `archived` run → 409 `run_import_not_allowed`. Without',
      '`create_missing_cases`, only results whose case already has a run item in this run are applied; the others',
      'are unmatched (`no matching run item found`, `matching test case is not part of the target run`). With it,',
      'matched and created cases missing from the run are added to it.',
    ].join('\n'),
    minRole: 'tester',
    project: fromResource(TEST_RUNS),
    status: 201,
    response: JunitImportDto,
    problems: [
      'payload_too_large',
      'too_many_files',
      'invalid_gzip',
      'unsupported_media_type',
      'empty_upload',
      'unsupported_report_format',
      'invalid_junit_xml',
      'invalid_tms_results_json',
      'run_import_not_allowed',
    ],
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: JUNIT_UPLOAD_SCHEMA })
  @ApiHeader({ name: 'Prefer', required: false, description: PREFER_DESCRIPTION })
  @ApiResponse({
    status: 202,
    type: ImportJobDto,
    description: ACCEPTED_DESCRIPTION,
    headers: ACCEPTED_HEADERS,
  })
  importIntoRun(
    @Param('id') id: string,
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: JunitImportQueryDto,
    @Req() req: Request,
  ): Promise<JsonBody | ImportJobDto> {
    return this.imports.importIntoRun(access, user, id, query, req);
  }

  @Post('projects/:id/imports/junit')
  @Transactional()
  @Endpoint({
    summary:
      'Import JUnit XML (or Karvio results JSON) results into a project (target run found by name, or created)',
    description: [
      UPLOAD_RULES,
      '',
      'Project-level specifics (reference §4.12): the target run name is the report name (root `name`, else the',
      "first suite's; JSON: `run_name`), else the file name without extension, else `JUnit Import`. Among the project's",
      '`not_started`/`in_progress` runs of that name (case-insensitive) the newest is used — or, when the report has',
      'a timestamp, the one created closest to it within ±24 h; `target_run.match_mode` is `existing`. With none, a',
      'run of that name is created (`match_mode: "created"`; in a dry run it is not created and `target_run.id` is',
      'null). Every match is applied to the target run (cases missing from it are added).',
    ].join('\n'),
    minRole: 'tester',
    project: fromResource(PROJECTS),
    status: 201,
    response: JunitImportDto,
    problems: [
      'payload_too_large',
      'too_many_files',
      'invalid_gzip',
      'unsupported_media_type',
      'empty_upload',
      'unsupported_report_format',
      'invalid_junit_xml',
      'invalid_tms_results_json',
      'run_import_not_allowed',
    ],
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: JUNIT_UPLOAD_SCHEMA })
  @ApiHeader({ name: 'Prefer', required: false, description: PREFER_DESCRIPTION })
  @ApiResponse({
    status: 202,
    type: ImportJobDto,
    description: ACCEPTED_DESCRIPTION,
    headers: ACCEPTED_HEADERS,
  })
  importIntoProject(
    @CurrentAccess() access: ProjectAccess,
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: JunitImportQueryDto,
    @Req() req: Request,
  ): Promise<JsonBody | ImportJobDto> {
    return this.imports.importIntoProject(access, user, query, req);
  }

  @Get('imports/:id')
  @Endpoint({
    summary: 'An import and its state (background imports: queued, running, succeeded, failed)',
    description: [
      'Any import record: a background one (`Prefer: respond-async`) while it is `queued` or `running` (with its',
      '`progress` in testcases: `total` once the files are read, `processed` growing as batches of 1,000 are',
      "written — the writes themselves become visible only when the import's one transaction commits), then",
      '`succeeded` with `summary` (the counters, with `files`) and `result` (the answer a synchronous import gives,',
      'sent as the record stores it: the same JSON the import answered), or',
      '`failed` with `problem` (the problem body the synchronous import would have answered; nothing was applied).',
      'A synchronous import is `succeeded`, started and finished when it was made. `started_at` is the start of the',
      'latest attempt (a retry after a crash starts again from the start). Poll it (a second apart, say); the',
      'record stays after the job ends, its stored files do not.',
    ].join('\n'),
    minRole: 'viewer',
    project: fromResource(IMPORTS),
    response: ImportJobDto,
  })
  async getImport(@Param('id') id: string, @Res() res: Response): Promise<void> {
    // Written explicitly: a succeeded import's answer goes out as its stored text.
    sendJsonParts(res, await this.imports.getImportJson(id));
  }

  @Get('test-runs/:id/imports')
  @Endpoint({
    summary: 'List the JUnit imports of a run',
    description:
      'Real imports that succeeded (dry runs are never recorded; background imports once applied), newest first, ' +
      'paged. Each record has the file name, size, ' +
      'SHA-256, the summary counters, who imported and when; the raw file is not kept. ' +
      CURSOR_PAGING_NOTE,
    minRole: 'viewer',
    project: fromResource(TEST_RUNS),
    response: { schema: PageOrCursorSchema('JunitImportRecordDto') },
    problems: ['invalid_cursor'],
  })
  async list(
    @Param('id') id: string,
    @Query() q: ListImportsQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Page<JunitImportRecordDto> | CursorPage<JunitImportRecordDto>> {
    return withNextLink(req, res, await this.imports.list(id, q));
  }
}
