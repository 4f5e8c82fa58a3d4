import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsIn, IsNotEmpty, IsOptional, IsString, IsUUID } from 'class-validator';
import { PageQueryDto, QUERY_VALUES_MAX } from '../../../common/pagination/page';
import {
  MaxItems,
  MaxLen,
  NoNul,
  Nullable,
  OptionalNotNull,
  QueryArray,
} from '../../../common/validation/decorators';
import { RISK_LEVELS, type RiskLevel } from '../risk-score';

export const CATALOG_STATUSES = ['active', 'archived'] as const;
export type CatalogStatus = (typeof CATALOG_STATUSES)[number];

const FACTOR_VALUES = [0, 1, 2, 3, 4, 5];

/** Longest product/component name. */
export const NAME_MAX_LENGTH = 255;

/** Longest id accepted in a body or filter (ids are opaque: unknown or malformed → not found). */
export const ID_MAX_LENGTH = 100;
const FACTOR_MESSAGE = '$property must be an integer from 0 to 5';

/** Risk-formula text shared by the DTO and endpoint descriptions. */
export const RISK_FORMULA_DESCRIPTION = [
  '**Risk.** Six factors, each an integer 0..5 (defaults 0, `automation_confidence` 5):',
  '`weighted = 3·business_criticality + 2·change_frequency + 2·integration_complexity + ' +
    '2·defect_density + 3·production_incident_score + 1·(5 − automation_confidence)` (0..65; high ' +
    'automation confidence lowers the risk), `risk_score = round(weighted / 65 × 100)` (integer 0..100), ' +
    '`risk_level` = low (≤ 24), medium (25..49), high (50..74), critical (≥ 75).',
  'Examples: factors (5,4,4,3,4,1) → weighted 53 → score 82, critical; (4,0,0,0,4,5) → 24 → 37, medium; ' +
    'all zero with confidence 0 → 5 → 8, low.',
  '`risk_score` and `risk_level` are computed by the server on create and recomputed whenever a factor ' +
    'changes; sending them is a 422 (unknown field). A factor outside 0..5, a non-integer or an explicit ' +
    '`null` is a 422 naming the field.',
].join('\n\n');

/** Decorators of one optional risk factor (absent → default/unchanged, null → 422). */
function RiskFactor(example: number): PropertyDecorator {
  return (target, key) => {
    ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 5, example })(target, key);
    OptionalNotNull()(target, key);
    IsIn(FACTOR_VALUES, { message: FACTOR_MESSAGE })(target, key);
  };
}

export class ComponentDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Payments API' }) name: string;
  @ApiProperty({ example: 'payments-api', description: 'Slug, unique per project' }) key: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) owner_id: string | null;
  @ApiProperty({ enum: CATALOG_STATUSES }) status: CatalogStatus;
  @ApiProperty({ type: [String], example: ['backend'] }) tags: string[];
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 5 }) business_criticality: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 5 }) change_frequency: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 5 }) integration_complexity: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 5 }) defect_density: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 5 }) production_incident_score: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 5 }) automation_confidence: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 100,
    example: 82,
    description: 'round(weighted / 65 × 100); computed, not writable',
  })
  risk_score: number;
  @ApiProperty({
    enum: RISK_LEVELS,
    description: 'low ≤ 24, medium 25..49, high 50..74, critical ≥ 75',
  })
  risk_level: RiskLevel;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

/**
 * Fields products and components share on create (separate key namespaces, same rules):
 * key, description, owner, status, tags.
 */
export abstract class CatalogCreateFieldsDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 100,
    example: 'payments-api',
    description:
      'Slugified (lower case, runs of other characters → `-`). Omitted, null or empty → generated from ' +
      'the name. Made unique in the project with `-2`, `-3` … (a taken key is suffixed, never refused).',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  @NoNul()
  key?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  @NoNul()
  description?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'An active member of the project, else (unknown id included) 422 `invalid_owner`',
  })
  @Nullable()
  @IsString()
  @MaxLen(ID_MAX_LENGTH)
  @NoNul()
  owner_id?: string | null;

  @ApiPropertyOptional({ enum: CATALOG_STATUSES, default: 'active' })
  @OptionalNotNull()
  @IsIn(CATALOG_STATUSES)
  status?: CatalogStatus;

  @ApiPropertyOptional({ type: [String], description: 'Trimmed, de-duplicated case-insensitively' })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  @NoNul({ each: true })
  tags?: string[];
}

/** The same shared fields on PATCH (every one optional; null clears the nullable ones). */
export abstract class CatalogUpdateFieldsDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 100,
    description:
      'A new key, slugified and suffixed `-2`, `-3` … when another item of the same kind in the project has ' +
      'it; null or empty → regenerated from the (new) name. Renaming alone keeps the key.',
  })
  @Nullable()
  @IsString()
  @MaxLen(100)
  @NoNul()
  key?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10000 })
  @Nullable()
  @IsString()
  @MaxLen(10000)
  @NoNul()
  description?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'uuid',
    description: 'An active member of the project, else 422 `invalid_owner`; null clears the owner',
  })
  @Nullable()
  @IsString()
  @MaxLen(ID_MAX_LENGTH)
  @NoNul()
  owner_id?: string | null;

  @ApiPropertyOptional({ enum: CATALOG_STATUSES })
  @OptionalNotNull()
  @IsIn(CATALOG_STATUSES)
  status?: CatalogStatus;

  @ApiPropertyOptional({ type: [String] })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(100)
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  @NoNul({ each: true })
  tags?: string[];
}

export class CreateComponentDto extends CatalogCreateFieldsDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: NAME_MAX_LENGTH, example: 'Payments API' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(NAME_MAX_LENGTH)
  @NoNul()
  name: string;

  @RiskFactor(3) business_criticality?: number;
  @RiskFactor(2) change_frequency?: number;
  @RiskFactor(2) integration_complexity?: number;
  @RiskFactor(1) defect_density?: number;
  @RiskFactor(1) production_incident_score?: number;
  @RiskFactor(4) automation_confidence?: number;
}

export class UpdateComponentDto extends CatalogUpdateFieldsDto {
  @ApiPropertyOptional({ maxLength: NAME_MAX_LENGTH })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(NAME_MAX_LENGTH)
  @NoNul()
  name?: string;

  @RiskFactor(3) business_criticality?: number;
  @RiskFactor(2) change_frequency?: number;
  @RiskFactor(2) integration_complexity?: number;
  @RiskFactor(1) defect_density?: number;
  @RiskFactor(1) production_incident_score?: number;
  @RiskFactor(4) automation_confidence?: number;
}

export class ListComponentsQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({ enum: CATALOG_STATUSES, isArray: true, description: 'Repeatable; any of' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(CATALOG_STATUSES, { each: true })
  status?: CatalogStatus[];

  @ApiPropertyOptional({ enum: RISK_LEVELS, isArray: true, description: 'Repeatable; any of' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(RISK_LEVELS, { each: true })
  risk_level?: RiskLevel[];

  @ApiPropertyOptional({
    type: [String],
    description: 'Repeatable; components having any of the tags (case-insensitive)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  @NoNul({ each: true })
  tag?: string[];

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description:
      'Repeatable; components linked to any of these products (unknown ids match nothing)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(ID_MAX_LENGTH, { each: true })
  @NoNul({ each: true })
  product_id?: string[];

  @ApiPropertyOptional({ description: 'Case-insensitive substring of name, key or description' })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  @NoNul()
  search?: string;
}

export class ComponentGraphQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;
}
