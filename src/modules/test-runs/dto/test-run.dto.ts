import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
  ValidationOptions,
} from 'class-validator';
import { ApiItemsMaxLength } from '../../../common/openapi/item-limits-docs';
import { CursorPageQueryDto } from '../../../common/pagination/cursor-query';
import { FieldsParam } from '../../../common/pagination/fields';
import { SORT_ORDERS, SortOrder, QUERY_VALUES_MAX } from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NoNul,
  Nullable,
  OptionalNotNull,
  QueryArray,
} from '../../../common/validation/decorators';
import { NestedObject } from '../../../common/validation/nested-object';
import { RUN_ITEM_STATUSES, RunItemStatus } from '../run-summary';
import { RUN_STATUSES, RunStatus } from '../run-status';
import {
  ATTRIBUTE_KEY_MAX_LENGTH,
  ATTRIBUTE_KEY_RULE,
  ATTRIBUTE_VALUE_MAX_LENGTH,
  attributesProblems,
  CI_BRANCH_MAX_LENGTH,
  CI_JOB_URL_MAX_LENGTH,
  CI_PIPELINE_ID_MAX_LENGTH,
  CI_PROVIDER_MAX_LENGTH,
  ciFieldProblem,
  CiField,
  COMMIT_SHA_MAX_LENGTH,
  COMMIT_SHA_MIN_LENGTH,
  COMMIT_SHA_RE,
  MAX_RUN_ATTRIBUTES,
  parseAttributePair,
} from '../run-metadata';
import {
  DATETIME_MAX_LENGTH,
  IsDateOrDateTime,
  IsDateTime,
} from '../../../common/validation/datetime';

/** Largest `planned_item_count` (the column is a PostgreSQL integer). */
export const MAX_PLANNED_ITEM_COUNT = 2_147_483_647;

export class RunSummaryDto {
  @ApiProperty({ description: 'All run items, untested included', example: 4 }) total: number;
  @ApiProperty({ example: 1 }) untested: number;
  @ApiProperty({ example: 0 }) in_progress: number;
  @ApiProperty({ example: 2 }) passed: number;
  @ApiProperty({ example: 0 }) error: number;
  @ApiProperty({ example: 1 }) failure: number;
  @ApiProperty({ example: 0 }) blocked: number;
  @ApiProperty({ example: 0 }) skipped: number;
  @ApiProperty({ example: 0 }) xfailed: number;
  @ApiProperty({ example: 0 }) xpassed: number;
  @ApiProperty({ description: 'round(passed / total × 100, 2); 0 without items', example: 50 })
  pass_rate: number;
}

export class StatusBreakdownItemDto {
  @ApiProperty({ enum: RUN_ITEM_STATUSES }) status: RunItemStatus;
  @ApiProperty({ example: 2 }) count: number;
}

export class StatusBreakdownDto {
  @ApiProperty({
    type: [StatusBreakdownItemDto],
    description:
      'Statuses with count > 0 in the fixed order untested, in_progress, passed, error, failure, ' +
      'blocked, skipped, xfailed, xpassed; empty on a new run',
  })
  items: StatusBreakdownItemDto[];
}

const EXAMPLE_RUN_ID = '019a1f7e-5c3b-7d2a-9e41-6b8f2c0d4a17';
const EXAMPLE_PROJECT_ID = '019a1f7e-1a20-7c44-8b1e-3f5d9a6e2b01';
const EXAMPLE_ENVIRONMENT_ID = '019a1f7e-2b31-7a05-a7c2-4e6f0b1c3d22';
const EXAMPLE_REVISION_ID = '019a1f7e-3c42-7b16-b8d3-5f7a1c2d4e33';
const EXAMPLE_MILESTONE_ID = '019a1f7e-4d53-7c27-89e4-6a8b2d3e5f44';
const EXAMPLE_USER_ID = '019a1f7d-9e64-7d38-9af5-7b9c3e4f6a55';
const EXAMPLE_ASSIGNEE_ID = '019a1f7d-af75-7e49-abf6-8cad4f5a7b66';
const EXAMPLE_SNAPSHOT_HASH =
  'sha256:6f1ed002ab5595859014ebf0951522d9a6b4c6c1e9a0b5e5a5c1d0e3f2a7b8c9';

/** A complete run object, shown as the example of the run schema in the OpenAPI document. */
export const TEST_RUN_EXAMPLE = {
  id: EXAMPLE_RUN_ID,
  project_id: EXAMPLE_PROJECT_ID,
  name: 'Nightly regression',
  description: 'Full regression on the release candidate',
  environment_id: EXAMPLE_ENVIRONMENT_ID,
  environment_name: 'Staging EU',
  environment_revision: {
    id: EXAMPLE_REVISION_ID,
    revision_number: 3,
    snapshot_hash: EXAMPLE_SNAPSHOT_HASH,
  },
  environment_revision_id: EXAMPLE_REVISION_ID,
  environment_revision_number: 3,
  environment_snapshot: {
    project_id: EXAMPLE_PROJECT_ID,
    environment: {
      name: 'Staging EU',
      kind: 'functional',
      status: 'active',
      description: null,
      tags: ['eu'],
      use_cases: ['regression'],
      schema_version: 1,
      meta: {},
      extra: {},
    },
    topology: {
      load_generators: [],
      system_under_test: [],
      supporting_services: [],
      metadata: {},
    },
  },
  milestone_id: EXAMPLE_MILESTONE_ID,
  milestone_name: 'Release 2.4',
  build: '2.4.0-rc1',
  ci: {
    provider: 'github-actions',
    branch: 'release/2.4',
    commit_sha: '9fceb02d0ae598e95dc970b74767f19372d61af8',
    job_url: 'https://github.com/acme/shop/actions/runs/9876543210',
    pipeline_id: '9876543210',
  },
  attributes: { team: 'payments', os: 'linux' },
  assignee: EXAMPLE_ASSIGNEE_ID,
  created_by: EXAMPLE_USER_ID,
  created_by_name: 'Ada Lovelace',
  status: 'in_progress',
  started_at: '2026-05-01T08:00:00.000Z',
  completed_at: null,
  archived_at: null,
  planned_item_count: 120,
  summary: {
    total: 4,
    untested: 1,
    in_progress: 0,
    passed: 2,
    error: 0,
    failure: 1,
    blocked: 0,
    skipped: 0,
    xfailed: 0,
    xpassed: 0,
    pass_rate: 50,
  },
  status_breakdown: {
    items: [
      { status: 'untested', count: 1 },
      { status: 'passed', count: 2 },
      { status: 'failure', count: 1 },
    ],
  },
  created_at: '2026-05-01T07:55:12.345Z',
  updated_at: '2026-05-01T09:12:03.210Z',
} satisfies Record<string, unknown>;

const X = TEST_RUN_EXAMPLE;

/** The top-level fields of the run object, in the schema's order: what `fields` may name. */
export const TEST_RUN_FIELDS: readonly string[] = Object.keys(TEST_RUN_EXAMPLE);

export class EnvironmentRevisionRefDto {
  @ApiProperty({ format: 'uuid', example: EXAMPLE_REVISION_ID }) id: string;
  @ApiProperty({ example: 3 }) revision_number: number;
  @ApiProperty({ example: EXAMPLE_SNAPSHOT_HASH }) snapshot_hash: string;
}

/** Bounds of the run metadata, in words (OpenAPI descriptions). */
const ATTRIBUTES_RULES =
  `Free key → value strings set by CI or by hand (issue #24): at most ${MAX_RUN_ATTRIBUTES} pairs; ` +
  `keys ${ATTRIBUTE_KEY_RULE}; values strings of at most ${ATTRIBUTE_VALUE_MAX_LENGTH} ` +
  'characters without control characters. Otherwise 422 `validation_error` on `attributes`.';

/** A run's `ci` object as answered: every field, null when unknown. */
export class RunCiDto {
  @ApiProperty({
    nullable: true,
    type: String,
    maxLength: CI_PROVIDER_MAX_LENGTH,
    example: X.ci.provider,
    description: 'CI system, e.g. github-actions, gitlab-ci, jenkins (free text)',
  })
  provider: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    maxLength: CI_BRANCH_MAX_LENGTH,
    example: X.ci.branch,
  })
  branch: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    minLength: COMMIT_SHA_MIN_LENGTH,
    maxLength: COMMIT_SHA_MAX_LENGTH,
    pattern: '^[0-9a-f]{7,64}$',
    example: X.ci.commit_sha,
    description: 'Hexadecimal, stored lowercase',
  })
  commit_sha: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uri',
    maxLength: CI_JOB_URL_MAX_LENGTH,
    example: X.ci.job_url,
  })
  job_url: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    maxLength: CI_PIPELINE_ID_MAX_LENGTH,
    example: X.ci.pipeline_id,
  })
  pipeline_id: string | null;
}

/** `ci` field rule (length, no control characters, hex SHA, http(s) URL) as a validator. */
function CiFieldRule(field: CiField, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'ciField',
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'string' || ciFieldProblem(field, value) === null,
        defaultMessage: (args) =>
          typeof args?.value === 'string' ? (ciFieldProblem(field, args.value) ?? '') : '',
      },
    },
    options,
  );
}

/** Absent, null or blank skip the other validators (the field is then null). */
const NullableOrBlank = () => ValidateIf((_o, v) => v !== undefined && v !== null && v !== '');

/** A run's `ci` object as given (create, PATCH): every field optional; blank or null → none. */
export class RunCiInputDto {
  @ApiPropertyOptional({ type: String, nullable: true, example: X.ci.provider })
  @NullableOrBlank()
  @IsString()
  @MaxLen(CI_PROVIDER_MAX_LENGTH)
  @CiFieldRule('provider')
  provider?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: X.ci.branch })
  @NullableOrBlank()
  @IsString()
  @MaxLen(CI_BRANCH_MAX_LENGTH)
  @CiFieldRule('branch')
  branch?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: COMMIT_SHA_RE.source,
    maxLength: COMMIT_SHA_MAX_LENGTH,
    example: X.ci.commit_sha,
    description: `${COMMIT_SHA_MIN_LENGTH} to ${COMMIT_SHA_MAX_LENGTH} hexadecimal digits (stored lowercase)`,
  })
  @NullableOrBlank()
  @IsString()
  @CiFieldRule('commit_sha')
  commit_sha?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    format: 'uri',
    example: X.ci.job_url,
    description: 'An absolute http:// or https:// URL',
  })
  @NullableOrBlank()
  @IsString()
  @MaxLen(CI_JOB_URL_MAX_LENGTH)
  @CiFieldRule('job_url')
  job_url?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: X.ci.pipeline_id })
  @NullableOrBlank()
  @IsString()
  @MaxLen(CI_PIPELINE_ID_MAX_LENGTH)
  @CiFieldRule('pipeline_id')
  pipeline_id?: string | null;
}

/** An `attributes` object: {@link attributesProblems} as a validator (one message per problem). */
function IsRunAttributes(): PropertyDecorator {
  return ValidateBy({
    name: 'runAttributes',
    validator: {
      validate: (value: unknown) => attributesProblems(value).length === 0,
      defaultMessage: (args) => attributesProblems(args?.value).join('; '),
    },
  });
}

/** The `attribute` list filter: `key:value` pairs. */
function IsAttributePair(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'attributePair',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && 'key' in parseAttributePair(value),
        defaultMessage: (args) => {
          const v: unknown = args?.value;
          const list = Array.isArray(v) ? v : [v];
          for (const item of list) {
            if (typeof item !== 'string') return 'each attribute filter must be key:value';
            const p = parseAttributePair(item);
            if ('problem' in p) return p.problem;
          }
          return 'each attribute filter must be key:value';
        },
      },
    },
    options,
  );
}

const ATTRIBUTES_SCHEMA = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: ATTRIBUTE_VALUE_MAX_LENGTH },
  maxProperties: MAX_RUN_ATTRIBUTES,
} as const;

/** The run object of api.md §2.1 with every field (CONTRACT §5). */
export class TestRunDto {
  @ApiProperty({ format: 'uuid', example: X.id }) id: string;
  @ApiProperty({ format: 'uuid', example: X.project_id }) project_id: string;
  @ApiProperty({ example: X.name }) name: string;
  @ApiProperty({ nullable: true, type: String, example: X.description })
  description: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    example: X.environment_id,
    description: 'Environment of the same project; null when the run has none',
  })
  environment_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: X.environment_name,
    description: 'Name of the environment when its revision was captured',
  })
  environment_name: string | null;
  @ApiProperty({
    nullable: true,
    type: EnvironmentRevisionRefDto,
    example: X.environment_revision,
    description:
      'The captured environment revision (id, number, hash), or null without an environment. ' +
      'Runs of the same environment name with different configurations differ here.',
  })
  environment_revision: EnvironmentRevisionRefDto | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid', example: X.environment_revision_id })
  environment_revision_id: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: X.environment_revision_number })
  environment_revision_number: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: X.environment_snapshot,
    description:
      'Full snapshot of the captured revision; `{}` without an environment. Later changes of ' +
      'the environment never alter it.',
  })
  environment_snapshot: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String, format: 'uuid', example: X.milestone_id })
  milestone_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: X.milestone_name,
    description: 'Name of the linked milestone; null exactly when milestone_id is',
  })
  milestone_name: string | null;
  @ApiProperty({ nullable: true, type: String, example: X.build }) build: string | null;
  @ApiProperty({
    nullable: true,
    type: RunCiDto,
    example: X.ci,
    description:
      'Where the run comes from in CI; null when the run has no CI field at all (runs created ' +
      'before issue #24 included), else every field, null when unknown',
  })
  ci: RunCiDto | null;
  @ApiProperty({
    ...ATTRIBUTES_SCHEMA,
    example: X.attributes,
    description: `${ATTRIBUTES_RULES} \`{}\` when none.`,
  })
  attributes: Record<string, string>;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uuid',
    example: X.assignee,
    description: 'User id',
  })
  assignee: string | null;
  @ApiProperty({ format: 'uuid', example: X.created_by }) created_by: string;
  @ApiProperty({
    example: X.created_by_name,
    description: "The creator's display name, else username",
  })
  created_by_name: string;
  @ApiProperty({ enum: RUN_STATUSES, example: X.status }) status: RunStatus;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: X.started_at })
  started_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: X.completed_at })
  completed_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: X.archived_at })
  archived_at: string | null;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: X.planned_item_count,
    description: '0 on a new run; never null',
  })
  planned_item_count: number;
  @ApiProperty({ type: RunSummaryDto, example: X.summary }) summary: RunSummaryDto;
  @ApiProperty({ type: StatusBreakdownDto, example: X.status_breakdown })
  status_breakdown: StatusBreakdownDto;
  @ApiProperty({ format: 'date-time', example: X.created_at }) created_at: string;
  @ApiProperty({ format: 'date-time', example: X.updated_at }) updated_at: string;
}

/** Fields of a new run (also used by test plans' create-run). */
export class CreateTestRunFields {
  @ApiProperty({ maxLength: 255, example: 'Nightly regression' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description:
      'Environment of the same project (not archived); its current revision is captured. ' +
      'Null or blank: no environment.',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  environment_id?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'Milestone of the same project (not archived)',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  milestone_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 255, example: '2.4.0-rc1' })
  @Nullable()
  @IsString()
  @MaxLen(255)
  build?: string | null;

  @ApiPropertyOptional({
    type: RunCiInputDto,
    nullable: true,
    description: 'CI metadata; null or absent: none. Unknown fields → 422.',
  })
  @Nullable()
  @NestedObject(() => RunCiInputDto)
  ci?: RunCiInputDto | null;

  @ApiPropertyOptional({ ...ATTRIBUTES_SCHEMA, description: `${ATTRIBUTES_RULES} Absent: \`{}\`.` })
  @OptionalNotNull()
  @IsObject()
  @IsRunAttributes()
  attributes?: Record<string, string>;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: 'User id; the user must have access to the project',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  assignee?: string | null;
}

export class CreateTestRunDto extends CreateTestRunFields {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;
}

export class UpdateTestRunDto {
  @ApiPropertyOptional({ maxLength: 255 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({
    type: String,
    description:
      'Re-captures the current revision of this environment (even when it is the same one). ' +
      'Cannot be null (422 `invalid_environment`).',
  })
  @IsOptional()
  @IsString()
  @MaxLen(100)
  environment_id?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'Sets or clears the link' })
  @Nullable()
  @IsString()
  @MaxLen(100)
  milestone_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 255 })
  @Nullable()
  @IsString()
  @MaxLen(255)
  build?: string | null;

  @ApiPropertyOptional({
    type: RunCiInputDto,
    nullable: true,
    description:
      'Replaces the whole `ci` object (fields left out become null); null clears it. Unknown ' +
      'fields → 422.',
  })
  @Nullable()
  @NestedObject(() => RunCiInputDto)
  ci?: RunCiInputDto | null;

  @ApiPropertyOptional({
    ...ATTRIBUTES_SCHEMA,
    description: `Replaces all attributes (\`{}\` clears them; cannot be null). ${ATTRIBUTES_RULES}`,
  })
  @OptionalNotNull()
  @IsObject()
  @IsRunAttributes()
  attributes?: Record<string, string>;

  @ApiPropertyOptional({ nullable: true, type: String })
  @Nullable()
  @IsString()
  @MaxLen(100)
  assignee?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    enum: RUN_STATUSES,
    description:
      'Only not_started→in_progress, in_progress→completed and completed→archived (lead) are ' +
      'accepted; null leaves the status unchanged',
  })
  @Nullable()
  @IsIn(RUN_STATUSES)
  status?: RunStatus | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Only with status=in_progress; default now',
  })
  @Nullable()
  @IsDateTime()
  started_at?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description:
      'Only with status=completed; default now, or started_at when that lies in the future (a ' +
      'client clock ahead of the server), so that the order holds; not before started_at',
  })
  @Nullable()
  @IsDateTime()
  completed_at?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description:
      'Only with status=archived; default now, or completed_at when that lies in the future; not ' +
      'before completed_at',
  })
  @Nullable()
  @IsDateTime()
  archived_at?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_PLANNED_ITEM_COUNT,
    example: 120,
    description: 'Cannot be null',
  })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(MAX_PLANNED_ITEM_COUNT)
  planned_item_count?: number;
}

export const RUN_SORT_KEYS = ['created_at', 'name', 'status', 'build', 'environment'] as const;
export type RunSortKey = (typeof RUN_SORT_KEYS)[number];

/** `GET /test-runs/{id}`: sparse fields. */
export class TestRunFieldsQueryDto {
  @FieldsParam(TEST_RUN_FIELDS, 'the run')
  fields?: string[];
}

export class ListTestRunsQueryDto extends CursorPageQueryDto {
  @FieldsParam(TEST_RUN_FIELDS, 'each run')
  fields?: string[];

  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({
    enum: RUN_STATUSES,
    isArray: true,
    description: 'Repeatable. Without it archived runs are hidden.',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(RUN_STATUSES, { each: true })
  status?: RunStatus[];

  @ApiPropertyOptional({ type: [String], description: 'Repeatable' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  environment_id?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Repeatable' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  milestone_id?: string[];

  @ApiPropertyOptional({
    type: [String],
    description: 'Repeatable: runs whose build is one of these (whole value, case-insensitive)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(255, { each: true })
  @NoNul({ each: true })
  build?: string[];

  @ApiPropertyOptional({
    type: [String],
    description: 'Repeatable: runs whose `ci.branch` is one of these (exact, case-sensitive)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(CI_BRANCH_MAX_LENGTH, { each: true })
  @NoNul({ each: true })
  branch?: string[];

  @ApiPropertyOptional({
    description:
      `Runs whose \`ci.commit_sha\` starts with this: ${COMMIT_SHA_MIN_LENGTH} to ` +
      `${COMMIT_SHA_MAX_LENGTH} hexadecimal digits, case-insensitive (a whole SHA matches exactly)`,
    pattern: COMMIT_SHA_RE.source,
    maxLength: COMMIT_SHA_MAX_LENGTH,
    example: '9fceb02',
  })
  @IsOptional()
  @IsString()
  @Matches(COMMIT_SHA_RE, {
    message: `commit_sha must be ${COMMIT_SHA_MIN_LENGTH} to ${COMMIT_SHA_MAX_LENGTH} hexadecimal digits`,
  })
  commit_sha?: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['team:payments'],
    description:
      `Repeatable \`key:value\` (split at the first \`:\`; the value may contain more): runs ` +
      `having every one of these attributes (exact values). At most ${MAX_RUN_ATTRIBUTES}.`,
  })
  @QueryArray()
  @MaxItems(MAX_RUN_ATTRIBUTES)
  @ApiItemsMaxLength(ATTRIBUTE_KEY_MAX_LENGTH + 1 + ATTRIBUTE_VALUE_MAX_LENGTH)
  @IsOptional()
  @IsAttributePair({ each: true })
  attribute?: string[];

  @ApiPropertyOptional({
    description: 'Case-insensitive substring of the name, build or environment name',
  })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  @NoNul()
  search?: string;

  @ApiPropertyOptional({ description: 'User id of the creator' })
  @IsOptional()
  @IsString()
  @MaxLen(100)
  @NoNul()
  created_by?: string;

  @ApiPropertyOptional({
    description: 'Created at or after: a date (YYYY-MM-DD, from 00:00 UTC) or an ISO 8601 datetime',
    example: '2026-05-01',
    maxLength: DATETIME_MAX_LENGTH,
  })
  @IsOptional()
  @IsDateOrDateTime()
  created_from?: string;

  @ApiPropertyOptional({
    description:
      'Created at or before: a date (YYYY-MM-DD, the whole day inclusive, UTC) or an ISO 8601 ' +
      'datetime, compared at millisecond precision (the precision of `created_at`; digits beyond ' +
      'milliseconds are ignored): a run answered with `created_at` equal to it is included',
    example: '2026-05-31',
    maxLength: DATETIME_MAX_LENGTH,
  })
  @IsOptional()
  @IsDateOrDateTime()
  created_to?: string;

  @ApiPropertyOptional({ enum: RUN_SORT_KEYS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(RUN_SORT_KEYS)
  sort_by?: RunSortKey;

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order?: SortOrder;
}
