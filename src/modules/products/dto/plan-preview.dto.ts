import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsIn, IsString, IsUUID } from 'class-validator';
import {
  MaxItems,
  MaxLen,
  NestedObject,
  NoNul,
  Nullable,
  OptionalNotNull,
} from '../../../common/validation/decorators';
import { RISK_LEVELS, type RiskLevel } from '../../components/risk-score';
import {
  PLAN_GENERATION_MODES,
  PLAN_REASON_CODES,
  type PlanGenerationMode,
  type PlanReasonCode,
} from '../coverage';

const MAX_IDS = 5000;

function IdList(description: string): PropertyDecorator {
  return (target, key) => {
    ApiPropertyOptional({ type: [String], default: [], description })(target, key);
    OptionalNotNull()(target, key);
    IsArray()(target, key);
    MaxItems(MAX_IDS)(target, key);
    IsString({ each: true })(target, key);
    MaxLen(64, { each: true })(target, key);
    NoNul({ each: true })(target, key);
  };
}

export class PlanGenerationConfigDto {
  @IdList('Products whose linked components are selected; each must be of the project')
  product_ids?: string[];

  @IdList(
    'Components selected directly; each must be of the project. With products too, only the ' +
      'listed components that are linked to a listed product are selected.',
  )
  component_ids?: string[];

  @ApiPropertyOptional({
    default: false,
    description: 'Also select everything the selected components depend on (transitively)',
  })
  @OptionalNotNull()
  @IsBoolean()
  include_dependent_components?: boolean;

  @ApiPropertyOptional({
    enum: RISK_LEVELS,
    nullable: true,
    default: null,
    description: 'Keep only components of at least this risk level',
  })
  @Nullable()
  @IsIn(RISK_LEVELS)
  minimum_risk_level?: RiskLevel | null;

  @ApiPropertyOptional({ enum: PLAN_GENERATION_MODES, default: 'regression' })
  @OptionalNotNull()
  @IsIn(PLAN_GENERATION_MODES)
  generation_mode?: PlanGenerationMode;

  @IdList('Active cases of the project always included (unknown ids are ignored)')
  explicit_include_case_ids?: string[];

  @IdList('Cases removed from the result')
  explicit_exclude_case_ids?: string[];
}

export class GeneratePlanPreviewDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  project_id: string;

  @ApiPropertyOptional({ type: PlanGenerationConfigDto, description: 'Omitted → every default' })
  @OptionalNotNull()
  @NestedObject(() => PlanGenerationConfigDto)
  config?: PlanGenerationConfigDto;
}

export class PreviewIncludedCaseDto {
  @ApiProperty({ format: 'uuid' }) test_case_id: string;
  @ApiProperty({ enum: PLAN_REASON_CODES, isArray: true, description: 'Sorted alphabetically' })
  reason_codes: PlanReasonCode[];
  @ApiProperty({ type: [String], description: 'Resolved components the case covers, ascending' })
  matched_component_ids: string[];
  @ApiProperty({ enum: RISK_LEVELS, description: 'low when the case matched no component' })
  highest_component_risk_level: RiskLevel;
  @ApiProperty({ type: 'integer' }) highest_component_risk_score: number;
}

export class PreviewExcludedCaseDto {
  @ApiProperty({ format: 'uuid' }) test_case_id: string;
  @ApiProperty({ enum: ['explicit_exclude'] }) reason: 'explicit_exclude';
}

export class PreviewSummaryDto {
  @ApiProperty({ type: 'integer' }) resolved_components: number;
  @ApiProperty({ type: 'integer', description: 'Every case considered, explicit includes counted' })
  candidate_cases: number;
  @ApiProperty({ type: 'integer' }) included_cases: number;
  @ApiProperty({ type: 'integer' }) excluded_cases: number;
}

export class PlanGenerationPreviewDto {
  @ApiProperty({ type: [String], description: 'Ascending' }) resolved_component_ids: string[];
  @ApiProperty({ type: [String], description: 'Included case ids in plan order' })
  resolved_case_ids: string[];
  @ApiProperty({ type: [PreviewIncludedCaseDto] }) included_cases: PreviewIncludedCaseDto[];
  @ApiProperty({ type: [PreviewExcludedCaseDto] }) excluded_cases: PreviewExcludedCaseDto[];
  @ApiProperty({ type: PreviewSummaryDto }) summary: PreviewSummaryDto;
}

export class PlanGenerationPreviewResponseDto {
  @ApiProperty({ type: PlanGenerationPreviewDto }) preview: PlanGenerationPreviewDto;
}
