import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { OptionalNotNull, QueryInt } from '../../../common/validation/decorators';
import { MAX_PATH_INTEGER } from '../../../common/validation/path-integer';
import { MAX_DIFF_DEPTH, RevisionChangeOp } from '../revision-diff';

/** `GET /environments/{id}/revisions/{revision_number}/diff` query. */
export class RevisionDiffQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PATH_INTEGER,
    example: 3,
    description:
      'The revision to compare with (the `from` side; `revision_number` is the `to` side). ' +
      'Default: the previous revision (`revision_number - 1`); on revision 1 without `against` ' +
      'there is nothing before, and every field is reported as `added` (`from_revision` null). ' +
      'It may be newer than `revision_number` (the diff then reads backwards) or equal to it ' +
      '(identical, no changes). A whole number the environment does not have is 404 ' +
      '`environment_revision_not_found`; anything else 422 `query.against`.',
  })
  @QueryInt()
  @OptionalNotNull()
  @IsInt()
  @Min(1)
  @Max(MAX_PATH_INTEGER)
  against?: number;
}

const CHANGE_OPS: RevisionChangeOp[] = ['added', 'removed', 'changed'];

/**
 * Any JSON value or null (a field's value, or a whole component or node): one schema per kind
 * (OpenAPI 3.0 has no "any type" with `nullable`, so null is admitted by one of them).
 */
const ANY_JSON_VALUE = [
  { type: 'string' },
  { type: 'number' },
  { type: 'boolean' },
  { type: 'object', nullable: true },
  { type: 'array', items: {} },
];

export class RevisionChangeDto {
  @ApiProperty({ enum: CHANGE_OPS, example: 'changed' })
  op: RevisionChangeOp;

  @ApiProperty({
    type: 'array',
    items: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    example: ['topology', 'system_under_test', 'api', 'nodes', 'db-1', 'region'],
    description:
      'Where the change is: a top-level field (`["tags"]`, `["meta", "owner"]`) or ' +
      '`["topology", <section>, <component name>, "nodes", <node name>, <field>, …]`. An unnamed ' +
      'node is named by its position (a number from 0) among the unnamed nodes of its component.',
  })
  path: Array<string | number>;

  @ApiProperty({
    oneOf: ANY_JSON_VALUE,
    example: 'eu-west-1',
    description:
      'The value before (`null` for `added`); a whole component or node when one is removed.',
  })
  from: unknown;

  @ApiProperty({
    oneOf: ANY_JSON_VALUE,
    example: 'eu-central-1',
    description:
      'The value after (`null` for `removed`); a whole component or node when one is added.',
  })
  to: unknown;
}

export class RevisionDiffCountsDto {
  @ApiProperty({ example: 1 }) added: number;
  @ApiProperty({ example: 0 }) removed: number;
  @ApiProperty({ example: 2 }) changed: number;
}

export const REVISION_DIFF_RULES =
  'Compares two stored snapshots of the environment. Top-level fields (`name`, `kind`, ' +
  '`status`, `description`, `tags`, `use_cases`, `schema_version`, `meta`, `extra`) and the ' +
  'topology are compared; topology components are matched by section and `name`, nodes by ' +
  '`name` within their component (unnamed nodes by their position among the unnamed ones), so ' +
  'reordering changes nothing and a rename is a removal plus an addition (a name repeated within ' +
  'a section is matched by order of occurrence). An added or removed component or node is one ' +
  'change carrying the whole object. Arrays of scalars (`tags`, `use_cases`, `endpoints`, …) are ' +
  'compared as sets: order and duplicates do not count, and a difference is one `changed` whose ' +
  '`from`/`to` are the sorted, de-duplicated values. Free-form objects (`meta`, `extra`, ' +
  '`metadata`, `resources`, extra keys) are compared key by key, recursively, down to ' +
  `${MAX_DIFF_DEPTH} levels below the field; deeper, and for arrays that hold objects or ` +
  'arrays, a difference is one `changed` with the whole values. Changes are listed in field ' +
  'order (the topology after the top-level fields), keys and names in code-point order.';

export class RevisionDiffDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 2,
    description: 'The `from` side (`against`); null on revision 1 without `against`.',
  })
  from_revision: number | null;

  @ApiProperty({ example: 3, description: 'The `to` side (`revision_number`).' })
  to_revision: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'sha256:5d1c0a1e0f6b8a2c9e4d7f3b1a6c8e2d4f0b9a7c5e3d1f8b6a4c2e0d9f7b5a3c',
  })
  from_hash: string | null;

  @ApiProperty({
    example: 'sha256:0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b',
  })
  to_hash: string;

  @ApiProperty({
    example: false,
    description:
      'True exactly when `changes` is empty. Equal hashes are identical; different hashes can ' +
      'be too when only an order changed (components, nodes, tags).',
  })
  identical: boolean;

  @ApiProperty({ type: RevisionDiffCountsDto })
  counts: RevisionDiffCountsDto;

  @ApiProperty({ type: [RevisionChangeDto], description: REVISION_DIFF_RULES })
  changes: RevisionChangeDto[];
}
