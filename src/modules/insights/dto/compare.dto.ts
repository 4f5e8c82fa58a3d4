import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, ValidateBy } from 'class-validator';
import { PageQueryDto, QUERY_VALUES_MAX } from '../../../common/pagination/page';
import { MaxItems, QueryArray } from '../../../common/validation/decorators';
import { CHANGE_CLASSES, ChangeClass } from '../change-class';

/** The only value of `base`. */
export const BASE_PREVIOUS = 'previous';

/** `?base_run_id=` or `?base=previous`: exactly one of them (a 422 on `query.base` otherwise). */
function ExactlyOneBase(): PropertyDecorator {
  return ValidateBy({
    name: 'exactlyOneBase',
    validator: {
      validate: (value: unknown, args) => {
        const other = (args?.object as { base_run_id?: unknown }).base_run_id;
        if ((value === undefined) === (other === undefined)) return false;
        return value === undefined || value === BASE_PREVIOUS;
      },
      defaultMessage: () =>
        `exactly one of base_run_id and base is required, and base must be '${BASE_PREVIOUS}'`,
    },
  });
}

export class CompareRunsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The run to compare against: a run of the same project (another project’s run: 422 ' +
      '`run_project_mismatch`; unknown: 404 `test_run_not_found`). Exactly one of `base_run_id` and `base`.',
  })
  @IsOptional()
  @IsUUID()
  base_run_id?: string;

  @ApiPropertyOptional({
    enum: [BASE_PREVIOUS],
    description:
      '`previous`: the latest run of the same project and the same environment (a run without ' +
      'environment: the latest run without environment) created before this one, by `created_at` ' +
      'then id (none: 404 `no_previous_run`). Exactly one of `base_run_id` and `base`.',
  })
  @ExactlyOneBase()
  base?: string;

  @ApiPropertyOptional({
    enum: CHANGE_CLASSES,
    isArray: true,
    description: 'Repeatable: only items of these classes (counts always cover every class).',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(CHANGE_CLASSES, { each: true })
  change?: ChangeClass[];
}

export class CompareRunSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Nightly 2026-11-24' }) name: string;
  @ApiProperty({ nullable: true, type: String, example: '1.4.2+871' }) build: string | null;
  @ApiProperty({ enum: ['not_started', 'in_progress', 'completed', 'archived'] }) status: string;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) environment_id: string | null;
  @ApiProperty({ nullable: true, type: Number, example: 3 })
  environment_revision_number: number | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class ChangeCountsDto {
  @ApiProperty({ example: 2, description: 'Only in this run' }) added: number;
  @ApiProperty({ example: 1, description: 'Only in the base run' }) removed: number;
  @ApiProperty({ example: 3, description: 'Failing now (failure, error), not failing in the base' })
  newly_failing: number;
  @ApiProperty({ example: 4, description: 'Failing in the base, passing now (passed, xfailed)' })
  fixed: number;
  @ApiProperty({ example: 1, description: 'Failing in both' }) still_failing: number;
  @ApiProperty({ example: 950, description: 'Same status in both, not failing' }) unchanged: number;
  @ApiProperty({ example: 5, description: 'Any other status change, e.g. passed → skipped' })
  changed: number;
}

export class EnvironmentDriftDto {
  @ApiProperty({ description: 'Both runs captured the same environment (or both none).' })
  same_environment: boolean;
  @ApiProperty({ nullable: true, type: Number, example: 3, description: 'The base run’s revision' })
  from_revision: number | null;
  @ApiProperty({ nullable: true, type: Number, example: 4, description: 'This run’s revision' })
  to_revision: number | null;
  @ApiProperty({
    description:
      'The captured revisions differ (a different environment, a different revision number, or ' +
      'one run with an environment and the other without).',
  })
  changed: boolean;
  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    description:
      'The diff of `GET /environments/{id}/revisions/{n}/diff` from the base run’s revision to ' +
      'this run’s (`from_revision`, `to_revision`, `from_hash`, `to_hash`, `identical`, `counts`, ' +
      '`changes`); null when either run has no captured revision (or it was deleted).',
    example: {
      from_revision: 3,
      to_revision: 4,
      from_hash: 'sha256:1f…',
      to_hash: 'sha256:9c…',
      identical: false,
      counts: { added: 0, removed: 0, changed: 1 },
      changes: [
        {
          op: 'changed',
          path: ['topology', 'system_under_test', 'api', 'nodes', 'db-1', 'region'],
          from: 'eu-west-1',
          to: 'eu-central-1',
        },
      ],
    },
  })
  diff: Record<string, unknown> | null;
}

export class DatasetDriftDto {
  @ApiProperty({ format: 'uuid' }) dataset_id: string;
  @ApiProperty({ example: 'Payment cards' }) name: string;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: 2,
    description: 'Highest revision the base run’s items used; null: the base run did not use it',
  })
  from_revision: number | null;
  @ApiProperty({
    nullable: true,
    type: Number,
    example: 3,
    description: 'Highest revision this run’s items used; null: this run did not use it',
  })
  to_revision: number | null;
}

export class CompareItemDto {
  @ApiProperty({ format: 'uuid' }) test_case_id: string;
  @ApiProperty({ example: 'Checkout with a saved card' }) title: string;
  @ApiProperty({ enum: CHANGE_CLASSES }) change: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'passed',
    description: 'null: not in the base run',
  })
  base_status: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'failure',
    description: 'null: not in this run',
  })
  status: string | null;
}

export class RunComparisonDto {
  @ApiProperty({ type: CompareRunSummaryDto }) run: CompareRunSummaryDto;
  @ApiProperty({ type: CompareRunSummaryDto }) base: CompareRunSummaryDto;
  @ApiProperty({
    type: ChangeCountsDto,
    description: 'Over every case of either run (the change filter does not apply)',
  })
  counts: ChangeCountsDto;
  @ApiProperty({ description: 'The runs’ `build` values differ (null counts as a value)' })
  build_changed: boolean;
  @ApiProperty({ type: EnvironmentDriftDto }) environment: EnvironmentDriftDto;
  @ApiProperty({
    type: [DatasetDriftDto],
    description:
      'Datasets bound to the cases of either run (as recorded in each run case’s dataset ' +
      'snapshot) whose highest used revision differs between the runs, by name then id',
  })
  datasets: DatasetDriftDto[];
  @ApiProperty({
    type: [CompareItemDto],
    description:
      'One page of cases, by class (newly_failing, fixed, still_failing, added, removed, changed, ' +
      'unchanged), then title (case-insensitive), then test case id',
  })
  items: CompareItemDto[];
  @ApiProperty({ example: 1000, description: 'Items matching the change filter' }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 50 }) page_size: number;
  @ApiProperty() has_next: boolean;
}
