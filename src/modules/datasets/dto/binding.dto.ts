import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsString,
  IsUUID,
  Max,
  Min,
  Validate,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { MaxItems, MaxLen, Nullable, OptionalNotNull } from '../../../common/validation/decorators';
import { MAX_PG_INTEGER } from '../../../common/validation/path-integer';
import {
  BINDING_MODES,
  BindingMode,
  ROW_SELECTION_TYPES,
  RowSelectionType,
} from '../binding-rules';

const MAX_SELECTED_KEYS = 10000;
const MAX_ROW_KEY_LENGTH = 128;

/**
 * Create body: `pinned_revision_number` is an integer 1..2^31-1, required (non-null) when `mode` is
 * `pin_revision`. Checked with the request shape, so it answers 422 before any 404/403 (CONTRACT §3).
 */
@ValidatorConstraint({ name: 'pinnedRevisionNumber' })
class PinnedRevisionNumberRule implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    return pinProblem(value, args.object) === null;
  }
  defaultMessage(args: ValidationArguments): string {
    return pinProblem(args.value, args.object) ?? 'invalid';
  }
}

function pinProblem(value: unknown, body: object): string | null {
  if (value === undefined || value === null) {
    return (body as { mode?: unknown }).mode === 'pin_revision'
      ? 'pinned_revision_number is required when mode is pin_revision'
      : null;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PG_INTEGER)
    return `pinned_revision_number must be an integer from 1 to ${MAX_PG_INTEGER}`;
  return null;
}

/**
 * Create body: `selected_row_keys` is a list of at most 10,000 non-empty row keys (≤ 128 characters),
 * required and non-empty when `row_selection_type` is `subset`; never null.
 */
@ValidatorConstraint({ name: 'selectedRowKeys' })
class SelectedRowKeysRule implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    return keysProblem(value, args.object) === null;
  }
  defaultMessage(args: ValidationArguments): string {
    return keysProblem(args.value, args.object) ?? 'invalid';
  }
}

function keysProblem(value: unknown, body: object): string | null {
  const subset = (body as { row_selection_type?: unknown }).row_selection_type === 'subset';
  if (value === undefined) {
    return subset ? 'selected_row_keys is required when row_selection_type is subset' : null;
  }
  if (value === null) return 'selected_row_keys must not be null';
  if (!Array.isArray(value)) return 'selected_row_keys must be an array of row keys';
  if (value.length > MAX_SELECTED_KEYS)
    return `selected_row_keys must contain no more than ${MAX_SELECTED_KEYS} elements`;
  // Characters as PostgreSQL counts them (code points), as every MaxLen does.
  const fits = (k: unknown) =>
    typeof k === 'string' &&
    k !== '' &&
    (k.length <= MAX_ROW_KEY_LENGTH || [...k].length <= MAX_ROW_KEY_LENGTH);
  if (!value.every(fits))
    return `each value in selected_row_keys must be a non-empty string of at most ${MAX_ROW_KEY_LENGTH} characters`;
  if (subset && value.length === 0)
    return 'selected_row_keys must list at least one row key when row_selection_type is subset';
  return null;
}

export class DatasetBindingDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) test_case_id: string;
  @ApiProperty({ format: 'uuid' }) dataset_id: string;
  @ApiProperty({ description: 'Current name of the bound dataset', example: 'Login users' })
  dataset_name: string;
  @ApiProperty({ example: 'users' }) dataset_alias: string;
  @ApiProperty({ enum: BINDING_MODES }) mode: BindingMode;
  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'Set exactly when mode is pin_revision',
  })
  pinned_revision_number: number | null;
  @ApiProperty({
    description:
      "Revision the binding uses now: the pinned revision for pin_revision, else the dataset's current revision",
    example: 3,
  })
  resolved_revision_number: number;
  @ApiProperty({ enum: ROW_SELECTION_TYPES }) row_selection_type: RowSelectionType;
  @ApiProperty({ type: [String], description: 'Empty unless row_selection_type is subset' })
  selected_row_keys: string[];
  @ApiProperty({ example: 0 }) sort_order: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class DatasetBindingListDto {
  @ApiProperty({ type: [DatasetBindingDto] }) items: DatasetBindingDto[];
}

export class CreateDatasetBindingDto {
  @ApiProperty({ format: 'uuid', description: 'A dataset of the same project as the test case' })
  @IsUUID()
  dataset_id: string;

  @ApiProperty({
    maxLength: 128,
    example: 'users',
    description: 'Unique among the bindings of the case',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLen(128)
  dataset_alias: string;

  @ApiPropertyOptional({ enum: BINDING_MODES, default: 'follow_latest' })
  @OptionalNotNull()
  @IsIn(BINDING_MODES)
  mode?: BindingMode;

  @ApiPropertyOptional({
    nullable: true,
    type: 'integer',
    minimum: 1,
    maximum: MAX_PG_INTEGER,
    description:
      'Required when mode is pin_revision (the revision must exist, else 422 dataset_revision_not_found); ' +
      'ignored with follow_latest',
  })
  @Validate(PinnedRevisionNumberRule)
  pinned_revision_number?: number | null;

  @ApiPropertyOptional({ enum: ROW_SELECTION_TYPES, default: 'all' })
  @OptionalNotNull()
  @IsIn(ROW_SELECTION_TYPES)
  row_selection_type?: RowSelectionType;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_SELECTED_KEYS,
    maxLength: MAX_ROW_KEY_LENGTH,
    description:
      'Required (non-empty) when row_selection_type is subset; every key must exist in the resolved revision ' +
      '(else 422 unknown_row_keys); ignored with all. Duplicates are dropped.',
  })
  @Validate(SelectedRowKeysRule)
  selected_row_keys?: string[];

  @ApiPropertyOptional({ type: 'integer', default: 0, minimum: 0, maximum: MAX_PG_INTEGER })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(MAX_PG_INTEGER)
  sort_order?: number;
}

export class UpdateDatasetBindingDto {
  @ApiPropertyOptional({ maxLength: 128 })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(128)
  dataset_alias?: string;

  @ApiPropertyOptional({
    enum: BINDING_MODES,
    description:
      'Switching to follow_latest clears the pin; pin_revision needs a pin (sent or stored)',
  })
  @OptionalNotNull()
  @IsIn(BINDING_MODES)
  mode?: BindingMode;

  @ApiPropertyOptional({
    nullable: true,
    type: 'integer',
    minimum: 1,
    maximum: MAX_PG_INTEGER,
    description:
      'Must exist; null is refused while the resulting mode is pin_revision; ignored when it is follow_latest',
  })
  @Nullable()
  @IsInt()
  @Min(1)
  @Max(MAX_PG_INTEGER)
  pinned_revision_number?: number | null;

  @ApiPropertyOptional({
    enum: ROW_SELECTION_TYPES,
    description: 'Switching to all clears selected_row_keys',
  })
  @OptionalNotNull()
  @IsIn(ROW_SELECTION_TYPES)
  row_selection_type?: RowSelectionType;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_SELECTED_KEYS,
    description:
      'Replaces the selection; must be non-empty and exist in the resolved revision while the resulting ' +
      'row_selection_type is subset; ignored when it is all',
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_SELECTED_KEYS)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLen(128, { each: true })
  selected_row_keys?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_PG_INTEGER })
  @OptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(MAX_PG_INTEGER)
  sort_order?: number;
}

/** OpenAPI request examples of both modes. */
export const BINDING_CREATE_EXAMPLES = {
  follow_latest_all: {
    summary: 'Follow the latest revision, all active rows',
    value: { dataset_id: '0190f0c2-6a1e-7c3b-9d2e-1a2b3c4d5e6f', dataset_alias: 'users' },
  },
  pin_revision_subset: {
    summary: 'Pin revision 2, only two rows',
    value: {
      dataset_id: '0190f0c2-6a1e-7c3b-9d2e-1a2b3c4d5e6f',
      dataset_alias: 'browsers',
      mode: 'pin_revision',
      pinned_revision_number: 2,
      row_selection_type: 'subset',
      selected_row_keys: ['chrome', 'firefox'],
      sort_order: 1,
    },
  },
};

export const BINDING_UPDATE_EXAMPLES = {
  pin: {
    summary: 'Pin the binding to revision 3',
    value: { mode: 'pin_revision', pinned_revision_number: 3 },
  },
  follow_latest: {
    summary: 'Follow the latest revision again (clears the pin)',
    value: { mode: 'follow_latest' },
  },
  subset: {
    summary: 'Use only some rows',
    value: { row_selection_type: 'subset', selected_row_keys: ['admin', 'guest'] },
  },
};
