import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsString, IsUUID } from 'class-validator';
import { MaxLen, OptionalNotNull } from '../../../common/validation/decorators';
import { RISK_LEVELS, type RiskLevel } from '../../components/risk-score';
import {
  type BlockerReason,
  DEFAULT_MIN_RISK_LEVEL,
  READINESS_FAILING_STATUSES,
  READINESS_PASSING_STATUSES,
  type ReadinessVerdict,
} from '../readiness';

/** Longest `build` of the readiness query: the length of a run's `build`. */
export const READINESS_BUILD_MAX = 255;

/** `GET /products/{id}/readiness` query. */
export class ReadinessQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    example: '0192f3a4-5b6c-7d8e-9f01-23456789abcd',
    description:
      'Only results of runs on this environment count. Must be an environment of the product’s ' +
      'project (archived ones too), else 422 `invalid_environment`.',
  })
  @OptionalNotNull()
  @IsUUID()
  environment_id?: string;

  @ApiPropertyOptional({
    example: '2.4.0-rc1',
    description: 'Only results of runs with exactly this `build` count (trimmed, case-sensitive).',
  })
  @OptionalNotNull()
  @IsString()
  @IsNotEmpty()
  @MaxLen(READINESS_BUILD_MAX)
  build?: string;

  @ApiPropertyOptional({
    enum: RISK_LEVELS,
    default: DEFAULT_MIN_RISK_LEVEL,
    description:
      'Components at or above this risk level are evaluated (low < medium < high < critical).',
  })
  @OptionalNotNull()
  @IsIn(RISK_LEVELS)
  min_risk_level?: RiskLevel;
}

export class ReadinessCriteriaDto {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, example: null })
  environment_id: string | null;

  @ApiProperty({ type: String, nullable: true, example: '2.4.0-rc1' })
  build: string | null;

  @ApiProperty({ enum: RISK_LEVELS, example: 'high' })
  min_risk_level: RiskLevel;
}

export class ReadinessCountsDto {
  @ApiProperty({ example: 4, description: 'Components evaluated (at or above `min_risk_level`)' })
  components: number;
  @ApiProperty({ example: 1, description: 'Components without a mandatory covering case' })
  uncovered: number;
  @ApiProperty({ example: 1, description: 'Components with a failing mandatory case' })
  failing: number;
  @ApiProperty({ example: 0, description: 'Components with a mandatory case not proven passing' })
  not_run: number;
  @ApiProperty({ example: 2, description: 'Components whose mandatory cases all passed' })
  passing: number;
}

const REASONS: BlockerReason[] = ['uncovered', 'failing', 'not_run'];

export class ReadinessBlockerDto {
  @ApiProperty({ format: 'uuid', example: '0192f3a4-0000-7000-8000-00000000c0a1' })
  component_id: string;

  @ApiProperty({ example: 'Payments API' })
  component_name: string;

  @ApiProperty({ enum: RISK_LEVELS, example: 'critical' })
  risk_level: RiskLevel;

  @ApiProperty({ example: 82 })
  risk_score: number;

  @ApiProperty({ enum: REASONS, example: 'failing' })
  reason: BlockerReason;

  @ApiProperty({
    type: [String],
    example: ['0192f3a4-0000-7000-8000-0000000ca5e1'],
    description:
      'The cases behind the reason, sorted: the failing ones (`failing`), the ones without a ' +
      'passing latest result (`not_run`); empty for `uncovered`.',
  })
  test_case_ids: string[];
}

export const READINESS_RULES =
  'For each component linked to the product at or above `min_risk_level` (default ' +
  `\`${DEFAULT_MIN_RISK_LEVEL}\`), its mandatory covering cases are those of the product summary: ` +
  'coverages marked `is_mandatory_for_release` by **active** test cases. The latest result of a ' +
  'case is its run item in the newest run (by `created_at`, then id) of the project that contains ' +
  'the case, among runs that are not archived and, when given, are on `environment_id` and have ' +
  'exactly `build`. Each component falls in exactly one class: `uncovered` (no mandatory case), ' +
  `\`failing\` (a latest result is ${READINESS_FAILING_STATUSES.join(' or ')}), \`not_run\` (else ` +
  `a case has no latest result, or one other than ${READINESS_PASSING_STATUSES.join(' or ')}: ` +
  'untested, in_progress, blocked, skipped, xpassed), `passing`. Every class but `passing` is a ' +
  'blocker; the verdict is `ready` exactly when there is none (also when no component reaches ' +
  '`min_risk_level`). Blockers are sorted by `risk_score` (highest first), then component name ' +
  'and id. Four queries at most, whatever the size of the product.';

export class ReadinessDto {
  @ApiProperty({ enum: ['ready', 'not_ready'], example: 'not_ready' })
  verdict: ReadinessVerdict;

  @ApiProperty({ format: 'uuid', example: '0192f3a4-0000-7000-8000-0000000090d1' })
  product_id: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T21:00:00.000Z' })
  evaluated_at: string;

  @ApiProperty({ type: ReadinessCriteriaDto })
  criteria: ReadinessCriteriaDto;

  @ApiProperty({ type: ReadinessCountsDto })
  counts: ReadinessCountsDto;

  @ApiProperty({ type: [ReadinessBlockerDto], description: READINESS_RULES })
  blockers: ReadinessBlockerDto[];
}
