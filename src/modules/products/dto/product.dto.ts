import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  Min,
} from 'class-validator';
import { PageQueryDto, QUERY_VALUES_MAX } from '../../../common/pagination/page';
import { MAX_PG_INTEGER, MIN_PG_INTEGER } from '../../../common/validation/path-integer';
import {
  MaxItems,
  MaxLen,
  NestedList,
  NoNul,
  OptionalNotNull,
  QueryArray,
} from '../../../common/validation/decorators';
import {
  CATALOG_STATUSES,
  CatalogCreateFieldsDto,
  CatalogUpdateFieldsDto,
  type CatalogStatus,
  ID_MAX_LENGTH,
  NAME_MAX_LENGTH,
} from '../../components/dto/component.dto';
import { RISK_LEVELS, type RiskLevel } from '../../components/risk-score';

/** Most links one product may have (one PUT). */
export const MAX_PRODUCT_LINKS = 2000;

export class ProductSummarySnapshotDto {
  @ApiProperty({ type: 'integer', description: 'Linked components' }) total_components: number;
  @ApiProperty({
    type: 'integer',
    description: 'Linked components whose coverage score reaches the required score',
  })
  adequately_covered_components: number;
  @ApiProperty({
    type: 'integer',
    description:
      'Linked components below their required coverage score (including those without cases)',
  })
  uncovered_components: number;
  @ApiProperty({
    type: 'integer',
    description: 'Uncovered components of risk level high or critical',
  })
  high_risk_uncovered_components: number;
  @ApiProperty({
    type: 'integer',
    description:
      'Distinct active cases with a mandatory-for-release coverage of a linked component',
  })
  mandatory_release_cases: number;
}

export class ProductDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) project_id: string;
  @ApiProperty({ example: 'Web shop' }) name: string;
  @ApiProperty({ example: 'web-shop', description: 'Slug, unique per project' }) key: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) owner_id: string | null;
  @ApiProperty({ enum: CATALOG_STATUSES }) status: CatalogStatus;
  @ApiProperty({ type: [String], example: ['b2c'] }) tags: string[];
  @ApiProperty({
    type: ProductSummarySnapshotDto,
    description: 'Coverage figures, computed like the same-named keys of the product summary',
  })
  summary_snapshot: ProductSummarySnapshotDto;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CreateProductDto extends CatalogCreateFieldsDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiProperty({ maxLength: NAME_MAX_LENGTH, example: 'Web shop' })
  @IsString()
  @IsNotEmpty()
  @MaxLen(NAME_MAX_LENGTH)
  @NoNul()
  name: string;
}

export class UpdateProductDto extends CatalogUpdateFieldsDto {
  @ApiPropertyOptional({ maxLength: NAME_MAX_LENGTH })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(NAME_MAX_LENGTH)
  @NoNul()
  name?: string;
}

export class ListProductsQueryDto extends PageQueryDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({ enum: CATALOG_STATUSES, isArray: true, description: 'Repeatable; any of' })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsIn(CATALOG_STATUSES, { each: true })
  status?: CatalogStatus[];

  @ApiPropertyOptional({
    type: [String],
    description: 'Repeatable; products having any of the tags (case-insensitive)',
  })
  @QueryArray()
  @MaxItems(QUERY_VALUES_MAX)
  @IsOptional()
  @IsString({ each: true })
  @MaxLen(100, { each: true })
  @NoNul({ each: true })
  tag?: string[];

  @ApiPropertyOptional({ description: 'Case-insensitive substring of name, key or description' })
  @IsOptional()
  @IsString()
  @MaxLen(200)
  @NoNul()
  search?: string;
}

// ---------------------------------------------------------------------------------------------
// Links

export class ProductComponentLinkDto {
  @ApiProperty({ format: 'uuid', description: 'Link id' }) id: string;
  @ApiProperty({ format: 'uuid' }) product_id: string;
  @ApiProperty({ format: 'uuid' }) component_id: string;
  @ApiProperty({ example: 'payments-api' }) component_key: string;
  @ApiProperty({ example: 'Payments API' }) component_name: string;
  @ApiProperty({ enum: CATALOG_STATUSES }) component_status: CatalogStatus;
  @ApiProperty({ enum: RISK_LEVELS }) risk_level: RiskLevel;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100 }) risk_score: number;
  @ApiProperty() is_core: boolean;
  @ApiProperty({ type: 'integer' }) sort_order: number;
}

export class ProductComponentLinkListDto {
  @ApiProperty({ type: [ProductComponentLinkDto] }) items: ProductComponentLinkDto[];
}

export class ProductComponentLinkInputDto {
  @ApiProperty({
    format: 'uuid',
    description:
      "A component of the product's project; an unknown id or one of another project → 422 " +
      '`component_project_mismatch`',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLen(ID_MAX_LENGTH)
  @NoNul()
  component_id: string;

  @ApiPropertyOptional({ default: false })
  @OptionalNotNull()
  @IsBoolean()
  is_core?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    default: 0,
    minimum: MIN_PG_INTEGER,
    maximum: MAX_PG_INTEGER,
    description: 'Links are listed by sort_order, then in the order they were given',
  })
  @OptionalNotNull()
  @IsInt()
  @Min(MIN_PG_INTEGER)
  @Max(MAX_PG_INTEGER)
  sort_order?: number;
}

export class ReplaceProductComponentsDto {
  @ApiPropertyOptional({
    type: [ProductComponentLinkInputDto],
    default: [],
    description: `The complete new set of links (at most ${MAX_PRODUCT_LINKS}); [] (or omitted) removes all`,
  })
  @OptionalNotNull()
  @IsArray()
  @MaxItems(MAX_PRODUCT_LINKS)
  @IsObject({ each: true })
  @NestedList(() => ProductComponentLinkInputDto)
  links?: ProductComponentLinkInputDto[];
}

// ---------------------------------------------------------------------------------------------
// Summary

export class ComponentCoverageSummaryDto {
  @ApiProperty({ format: 'uuid' }) component_id: string;
  @ApiProperty() component_key: string;
  @ApiProperty() component_name: string;
  @ApiProperty({ enum: RISK_LEVELS }) risk_level: RiskLevel;
  @ApiProperty({ type: 'integer' }) risk_score: number;
  @ApiProperty({
    type: 'integer',
    description: 'Σ strength score of the active covering cases (smoke 1, regression 2, deep 3)',
  })
  coverage_score: number;
  @ApiProperty({
    type: 'integer',
    description: 'By risk level: low 1, medium 2, high 4, critical 6',
  })
  required_coverage_score: number;
  @ApiProperty({ description: 'coverage_score ≥ required_coverage_score' })
  adequately_covered: boolean;
  @ApiProperty({ description: 'Not adequately covered (no case at all, or not enough)' })
  uncovered: boolean;
  @ApiProperty({ type: 'integer', description: 'Active covering cases with a smoke coverage' })
  smoke_case_count: number;
  @ApiProperty({ type: 'integer', description: 'Active covering cases with a regression coverage' })
  regression_case_count: number;
  @ApiProperty({ type: 'integer', description: 'Active covering cases with a deep coverage' })
  deep_case_count: number;
  @ApiProperty({ type: [String], description: 'Active covering case ids, ascending' })
  covered_case_ids: string[];
}

export class ProductSummaryDto {
  @ApiProperty({ format: 'uuid' }) product_id: string;
  @ApiProperty({ type: 'integer', description: 'Linked components' }) total_components: number;
  @ApiProperty({ type: 'integer', description: 'Links with is_core = true' })
  core_components: number;
  @ApiProperty({
    type: 'integer',
    description: 'Linked components with at least one active covering case',
  })
  components_with_cases: number;
  @ApiProperty({ type: 'integer' }) adequately_covered_components: number;
  @ApiProperty({ type: 'integer', description: 'total_components − adequately_covered_components' })
  inadequately_covered_components: number;
  @ApiProperty({ type: 'integer', description: 'Same value as inadequately_covered_components' })
  uncovered_components: number;
  @ApiProperty({ type: 'integer', description: 'Uncovered components of level high or critical' })
  high_risk_uncovered_components: number;
  @ApiProperty({ type: 'integer', description: 'Σ coverage_score of the linked components' })
  coverage_score_total: number;
  @ApiProperty({
    type: 'integer',
    description: 'Σ required_coverage_score of the linked components',
  })
  required_coverage_score_total: number;
  @ApiProperty({
    type: 'integer',
    description: 'Distinct active cases covering any linked component',
  })
  total_cases: number;
  @ApiProperty({
    type: 'integer',
    description: 'Distinct active cases with a mandatory-for-release coverage',
  })
  mandatory_release_cases: number;
  @ApiProperty({ type: 'integer', description: 'Distinct cases with a smoke coverage' })
  smoke_cases: number;
  @ApiProperty({
    type: 'integer',
    description: 'Distinct cases with a smoke or regression coverage (cumulative)',
  })
  regression_cases: number;
  @ApiProperty({
    type: 'integer',
    description: 'Distinct cases with any coverage (cumulative; equals total_cases)',
  })
  deep_cases: number;
  @ApiProperty({
    type: 'integer',
    description: 'Covered cases whose test_case_type is not automated',
  })
  manual_cases: number;
  @ApiProperty({ type: 'integer', description: 'Covered cases whose test_case_type is automated' })
  automated_cases: number;
  @ApiProperty({ type: [ComponentCoverageSummaryDto], description: 'Sorted by component name' })
  per_component_breakdown: ComponentCoverageSummaryDto[];
}

export const SUMMARY_DESCRIPTION = [
  'Coverage of the product: its linked components (any status) and, for each, the coverages by ' +
    '**active** test cases (draft and archived cases never count).',
  'Per component: `coverage_score` = Σ strength score of the covering cases (smoke 1, regression 2, ' +
    'deep 3); `required_coverage_score` by risk level (low 1, medium 2, high 4, critical 6); ' +
    '`adequately_covered` = score ≥ required; `uncovered` = not adequately covered (so a component ' +
    'with some but not enough coverage is "uncovered"); `smoke/regression/deep_case_count` count the ' +
    'covering cases per strength (exclusive).',
  'Product level: `total_components`, `core_components` (links with is_core), ' +
    '`components_with_cases` (≥ 1 covering case), `adequately_covered_components`, ' +
    '`inadequately_covered_components` = `uncovered_components` = total − adequately covered, ' +
    '`high_risk_uncovered_components` (uncovered and high/critical), `coverage_score_total` and ' +
    '`required_coverage_score_total` (sums), `total_cases` (distinct covering cases), ' +
    '`mandatory_release_cases` (distinct cases with a mandatory-for-release coverage), ' +
    '`smoke_cases` (cases with a smoke coverage), `regression_cases` (smoke **or** regression — ' +
    'cumulative), `deep_cases` (any strength — cumulative, equals total_cases), `manual_cases` / ' +
    '`automated_cases` by test_case_type. `per_component_breakdown` is sorted by component name.',
  'Example: one critical component (score 89, required 6) covered by one active smoke case → ' +
    'coverage_score_total 1, required 6, adequately 0, uncovered 1, high-risk uncovered 1.',
].join('\n\n');
