import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CursorPageQueryDto } from '../../../common/pagination/cursor-query';
import { FieldsParam } from '../../../common/pagination/fields';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
} from 'class-validator';
import {
  PageQueryDto,
  QUERY_VALUES_MAX,
  SORT_ORDERS,
  SortOrder,
} from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NoNul,
  Nullable,
  OptionalNotNull,
  QueryArray,
  QueryBool,
} from '../../../common/validation/decorators';
import { registerSchemaExtras } from '../../../common/openapi/schema-extras';
import { FREE_FORM_KEY_RULE, FREE_FORM_KEYS_MAX } from '../../../common/validation/free-form';
import { KeptAsParsed } from '../../../common/validation/validate';
import { MAX_NODE_COUNT, TOPOLOGY_LIMITS as L } from '../topology';
import { EnvironmentBodyChecks } from './environment-body.validator';

/** Most entries of an environment's `tags`, and characters of one tag. */
export const ENVIRONMENT_TAGS_MAX = 100;
export const ENVIRONMENT_TAG_LENGTH = 100;
/** Most entries of an environment's `use_cases`, and characters of one use case. */
export const ENVIRONMENT_USE_CASES_MAX = 100;
export const ENVIRONMENT_USE_CASE_LENGTH = 255;

const FREE_FORM = {
  type: 'object',
  additionalProperties: true,
  maxProperties: FREE_FORM_KEYS_MAX,
} as const;
const FREE_FORM_NOTE = `Free-form JSON; at every level at most ${FREE_FORM_KEYS_MAX} keys per object, ${FREE_FORM_KEY_RULE}.`;

// ---------------------------------------------------------------------------------------------
// documentation-only shapes (topology, snapshot, entities, edges)

export class TopologyNodeDto {
  @ApiPropertyOptional({ nullable: true, type: String, example: 'api-1', maxLength: L.textLength })
  name?: string | null;
  @ApiProperty({
    example: 'vm',
    maxLength: L.textLength,
    description:
      'Required, not blank. Free text, e.g. baremetal, vm, container, cloud_service, kubernetes.',
  })
  host_type: string;
  @ApiPropertyOptional({ nullable: true, type: String, example: 'app', maxLength: L.textLength })
  role?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, example: 'aws', maxLength: L.textLength })
  provider?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    example: 'eu-central-1',
    maxLength: L.textLength,
  })
  region?: string | null;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    example: '10.0.0.5:8080',
    maxLength: L.endpointLength,
  })
  endpoint?: string | null;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_NODE_COUNT,
    default: 1,
    description: 'Number of identical hosts',
  })
  count?: number;
  @ApiPropertyOptional({ ...FREE_FORM, example: { cpu: '4', memory: '8Gi' } })
  resources?: Record<string, unknown>;
  @ApiPropertyOptional({
    type: [String],
    maxItems: L.tags,
    maxLength: L.tagLength,
    description: 'Normalised like every tags list',
  })
  tags?: string[];
  @ApiPropertyOptional(FREE_FORM) metadata?: Record<string, unknown>;
}

export class TopologyComponentDto {
  @ApiProperty({
    example: 'checkout-api',
    maxLength: L.textLength,
    description: 'Required, not blank',
  })
  name: string;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    example: 'service',
    maxLength: L.textLength,
  })
  component_type?: string | null;
  @ApiPropertyOptional({
    type: [String],
    example: ['/health', '/checkout'],
    maxItems: L.endpoints,
    maxLength: L.endpointLength,
  })
  endpoints?: string[];
  @ApiPropertyOptional({ type: [String], maxItems: L.tags, maxLength: L.tagLength })
  tags?: string[];
  @ApiPropertyOptional(FREE_FORM) metadata?: Record<string, unknown>;
  @ApiPropertyOptional({ type: [TopologyNodeDto], maxItems: L.nodesPerComponent })
  nodes?: TopologyNodeDto[];
}

export class TopologyDto {
  @ApiPropertyOptional({ type: [TopologyComponentDto], maxItems: L.componentsPerSection })
  load_generators?: TopologyComponentDto[];
  @ApiPropertyOptional({ type: [TopologyComponentDto], maxItems: L.componentsPerSection })
  system_under_test?: TopologyComponentDto[];
  @ApiPropertyOptional({ type: [TopologyComponentDto], maxItems: L.componentsPerSection })
  supporting_services?: TopologyComponentDto[];
  @ApiPropertyOptional(FREE_FORM) metadata?: Record<string, unknown>;
}

// Every object of a topology: at most 200 keys, counted as stored (with the declared fields each
// always has), and any additional keys kept verbatim.
for (const [schema, declared] of [
  ['TopologyNodeDto', 10],
  ['TopologyComponentDto', 6],
  ['TopologyDto', 4],
] as const) {
  registerSchemaExtras(schema, {
    additionalProperties: true,
    maxProperties: FREE_FORM_KEYS_MAX,
    description:
      `At most ${FREE_FORM_KEYS_MAX} keys, counted as stored: the ${declared} declared fields are ` +
      `always stored (defaulted), so at most ${FREE_FORM_KEYS_MAX - declared} additional keys; ` +
      `additional keys are kept verbatim (${FREE_FORM_KEY_RULE}).`,
  });
}

const TOPOLOGY_DESCRIPTION =
  'Keys `load_generators`, `system_under_test`, `supporting_services` (arrays of components) and ' +
  '`metadata` (object). Components need a non-blank `name`; nodes need a non-blank `host_type` and ' +
  'a `count` ≥ 1 (default 1). Components, nodes and the topology itself keep any additional ' +
  'environment-specific keys verbatim (custom `entities`/`edges` lists feed the derived graph). ' +
  'Stored fully defaulted: every declared field is present in responses. Limits: ' +
  `${L.componentsPerSection} components per section, ${L.nodesPerComponent} nodes per component, ` +
  `${L.endpoints} endpoints of ${L.endpointLength} characters, ${L.tags} tags of ${L.tagLength} ` +
  `characters, names and other texts ${L.textLength} characters; at every level at most ` +
  `${FREE_FORM_KEYS_MAX} keys per object, ${FREE_FORM_KEY_RULE}.`;

export class EnvironmentEntityDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'system_under_test:0' }) entity_key: string;
  @ApiProperty({ example: 'service', description: '`component_type`, `component`, `host`…' })
  entity_type: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'system_under_test',
    description: 'load_generator, system_under_test or dependency',
  })
  role: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) spec: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) extra: Record<string, unknown>;
  @ApiProperty({ format: 'date-time', description: 'When its revision was written' })
  created_at: string;
}

export class EnvironmentEdgeDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'system_under_test:0' }) from_entity_key: string;
  @ApiProperty({ example: 'system_under_test:0:node:0' }) to_entity_key: string;
  @ApiProperty({ example: 'contains' }) relation_type: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) spec: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) extra: Record<string, unknown>;
  @ApiProperty({ format: 'date-time', description: 'When its revision was written' })
  created_at: string;
}

// ---------------------------------------------------------------------------------------------
// responses

export class EnvironmentDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Staging EU' }) name: string;
  @ApiProperty({ example: 'performance', default: 'custom' }) kind: string;
  @ApiProperty({
    example: 'active',
    default: 'active',
    description: 'Free text; `archived` means archived (`archived_at` is set)',
  })
  status: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ type: [String], example: ['eu', 'k8s'] }) tags: string[];
  @ApiProperty({ type: [String], example: ['checkout', 'load'] }) use_cases: string[];
  @ApiProperty({ type: 'integer', example: 1 }) schema_version: number;
  @ApiProperty({ type: TopologyDto, description: TOPOLOGY_DESCRIPTION }) topology: Record<
    string,
    unknown
  >;
  @ApiProperty({ type: 'object', additionalProperties: true }) meta: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) extra: Record<string, unknown>;
  @ApiProperty({ type: 'integer', example: 3 }) current_revision_number: number;
  @ApiProperty({ format: 'uuid' }) current_revision_id: string;
  @ApiProperty({
    example: 'sha256:d859f9975c6d049857a856cdbe040c300529412673b65258f6311b1e33e276b8',
    description:
      "`sha256:` + lowercase hex SHA-256 of the canonical JSON of the current revision's full snapshot",
  })
  snapshot_hash: string;
  @ApiProperty({
    type: 'integer',
    description: 'Entities derived from the topology (current revision)',
  })
  entities_count: number;
  @ApiProperty({
    type: 'integer',
    description: 'Edges derived from the topology (current revision)',
  })
  edges_count: number;
  @ApiProperty({ type: 'integer', description: 'Components across the three sections' })
  topology_component_count: number;
  @ApiProperty({ type: 'integer', description: 'Sum of node `count`s' })
  topology_node_count: number;
  @ApiProperty({
    type: 'integer',
    description: 'Total length of the components’ `endpoints` lists',
  })
  topology_endpoint_count: number;
  @ApiProperty({ type: [String], description: 'Distinct node host types, sorted' })
  infra_host_types: string[];
  @ApiProperty({ type: [String], description: 'Distinct node providers, sorted' })
  infra_providers: string[];
  @ApiProperty({ type: [String], description: 'Distinct node regions, sorted' })
  infra_regions: string[];
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ format: 'uuid' }) updated_by: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) archived_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class EnvironmentRevisionListItemDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) environment_id: string;
  @ApiProperty({ type: 'integer', example: 2 }) revision_number: number;
  @ApiProperty({ type: 'integer', example: 1 }) schema_version: number;
  @ApiProperty({ description: 'True for exactly one revision of the environment' })
  is_current: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'Changed: topology, tags',
    description: '`Initial revision`, then `Changed: <top-level fields>`',
  })
  revision_note: string | null;
  @ApiProperty({ example: 'sha256:…' }) snapshot_hash: string;
  @ApiProperty({ type: 'integer' }) entities_count: number;
  @ApiProperty({ type: 'integer' }) edges_count: number;
  @ApiProperty({ format: 'uuid' }) created_by: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class EnvironmentRevisionDto extends EnvironmentRevisionListItemDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Exactly `{environment: {name, kind, status, description, tags, use_cases, schema_version, ' +
      'meta, extra}, topology, project_id}`; `snapshot_hash` covers its canonical JSON',
  })
  full_snapshot: Record<string, unknown>;
  @ApiProperty({
    type: [EnvironmentEntityDto],
    description: 'Derived from the topology, in derivation order',
  })
  entities: EnvironmentEntityDto[];
  @ApiProperty({ type: [EnvironmentEdgeDto], description: 'Derived from the topology' })
  edges: EnvironmentEdgeDto[];
}

export class UseCasesDto {
  @ApiProperty({ type: [String], example: ['checkout', 'load'] }) items: string[];
}

// ---------------------------------------------------------------------------------------------
// request bodies

export class CreateEnvironmentDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: 255, example: 'Staging EU', description: 'Trimmed; must not be empty' })
  @EnvironmentBodyChecks()
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name: string;

  @ApiPropertyOptional({ maxLength: 64, default: 'custom', example: 'performance' })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsString()
  @IsNotEmpty()
  @MaxLen(64)
  kind?: string;

  @ApiPropertyOptional({
    maxLength: 64,
    default: 'active',
    example: 'active',
    description:
      'Free text (active, maintenance…). `archived` (any letter case) creates an archived ' +
      'environment and needs the lead role.',
  })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsString()
  @IsNotEmpty()
  @MaxLen(64)
  status?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 10000,
    description: 'Blank becomes null',
  })
  @Nullable()
  @EnvironmentBodyChecks()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({
    type: [String],
    description: 'Trimmed, blanks dropped, case-insensitive duplicates removed',
  })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsArray()
  @MaxItems(ENVIRONMENT_TAGS_MAX)
  @IsString({ each: true })
  @MaxLen(ENVIRONMENT_TAG_LENGTH, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Normalised like tags' })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsArray()
  @MaxItems(ENVIRONMENT_USE_CASES_MAX)
  @IsString({ each: true })
  @MaxLen(ENVIRONMENT_USE_CASE_LENGTH, { each: true })
  use_cases?: string[];

  @ApiPropertyOptional({ type: TopologyDto, description: TOPOLOGY_DESCRIPTION })
  @KeptAsParsed()
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  topology?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_FORM, default: {}, description: FREE_FORM_NOTE })
  @KeptAsParsed()
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsObject()
  meta?: Record<string, unknown>;

  @ApiPropertyOptional({ ...FREE_FORM, default: {}, description: FREE_FORM_NOTE })
  @KeptAsParsed()
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsObject()
  extra?: Record<string, unknown>;
}

export class UpdateEnvironmentDto {
  @ApiPropertyOptional({ maxLength: 255, description: 'Trimmed; must not be empty' })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsString()
  @IsNotEmpty()
  @MaxLen(255)
  name?: string;

  @ApiPropertyOptional({ maxLength: 64 })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsString()
  @IsNotEmpty()
  @MaxLen(64)
  kind?: string;

  @ApiPropertyOptional({
    maxLength: 64,
    description:
      'Changing it to `archived` (archives: sets archived_at) or from `archived` to another value ' +
      '(restores: clears archived_at) needs the lead role.',
  })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsString()
  @IsNotEmpty()
  @MaxLen(64)
  status?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 10000,
    description: 'null clears it',
  })
  @Nullable()
  @EnvironmentBodyChecks()
  @IsString()
  @MaxLen(10000)
  description?: string | null;

  @ApiPropertyOptional({ type: [String], description: 'Replaces the list' })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsArray()
  @MaxItems(ENVIRONMENT_TAGS_MAX)
  @IsString({ each: true })
  @MaxLen(ENVIRONMENT_TAG_LENGTH, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Replaces the list' })
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsArray()
  @MaxItems(ENVIRONMENT_USE_CASES_MAX)
  @IsString({ each: true })
  @MaxLen(ENVIRONMENT_USE_CASE_LENGTH, { each: true })
  use_cases?: string[];

  @ApiPropertyOptional({
    type: TopologyDto,
    description: `Replaces the whole topology (no deep merge). ${TOPOLOGY_DESCRIPTION}`,
  })
  @KeptAsParsed()
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  topology?: Record<string, unknown>;

  @ApiPropertyOptional({
    ...FREE_FORM,
    description: `Replaces the object (no deep merge). ${FREE_FORM_NOTE}`,
  })
  @KeptAsParsed()
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsObject()
  meta?: Record<string, unknown>;

  @ApiPropertyOptional({
    ...FREE_FORM,
    description: `Replaces the object (no deep merge). ${FREE_FORM_NOTE}`,
  })
  @KeptAsParsed()
  @OptionalNotNull()
  @EnvironmentBodyChecks()
  @IsObject()
  extra?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// queries

export const ENVIRONMENT_SORT_KEYS = ['created_at', 'updated_at', 'name'] as const;
export type EnvironmentSortKey = (typeof ENVIRONMENT_SORT_KEYS)[number];

/** The top-level fields of the environment object, in the schema's order: what `fields` may name. */
export const ENVIRONMENT_FIELDS = [
  'id',
  'project_id',
  'name',
  'kind',
  'status',
  'description',
  'tags',
  'use_cases',
  'schema_version',
  'topology',
  'meta',
  'extra',
  'current_revision_number',
  'current_revision_id',
  'snapshot_hash',
  'entities_count',
  'edges_count',
  'topology_component_count',
  'topology_node_count',
  'topology_endpoint_count',
  'infra_host_types',
  'infra_providers',
  'infra_regions',
  'created_by',
  'updated_by',
  'archived_at',
  'created_at',
  'updated_at',
] as const;

export class ListEnvironmentsQueryDto extends CursorPageQueryDto {
  @FieldsParam(ENVIRONMENT_FIELDS, 'each environment (leave `topology` out for a light page)')
  fields?: string[];

  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({ default: false, description: 'Also list archived environments' })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  include_archived: boolean = false;

  @ApiPropertyOptional({
    maxLength: 200,
    description: 'Case-insensitive substring of the name or the description (% and _ literal)',
  })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  @NoNul()
  search?: string;

  @ApiPropertyOptional({
    type: [String],
    description:
      'Repeatable; environments having at least one of these use cases (exact element match)',
  })
  @QueryArray()
  @IsOptional()
  @IsArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsString({ each: true })
  @MaxLen(ENVIRONMENT_USE_CASE_LENGTH, { each: true })
  @NoNul({ each: true })
  use_case?: string[];

  @ApiPropertyOptional({ enum: ENVIRONMENT_SORT_KEYS, default: 'created_at' })
  @OptionalNotNull()
  @IsIn(ENVIRONMENT_SORT_KEYS)
  sort_by: EnvironmentSortKey = 'created_at';

  @ApiPropertyOptional({ enum: SORT_ORDERS, default: 'desc' })
  @OptionalNotNull()
  @IsIn(SORT_ORDERS)
  sort_order: SortOrder = 'desc';
}

export class UseCasesQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({
    default: false,
    description: 'Include use cases of archived environments',
  })
  @QueryBool()
  @OptionalNotNull()
  @IsBoolean()
  include_archived: boolean = false;
}

export class ListRevisionsQueryDto extends PageQueryDto {}
