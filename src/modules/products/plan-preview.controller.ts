import { Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromBody, ProjectAccess } from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body } from '../../common/validation/request-parts';
import { GeneratePlanPreviewDto, PlanGenerationPreviewResponseDto } from './dto/plan-preview.dto';
import { PlanPreviewService } from './plan-preview.service';

const DESCRIPTION = [
  'Which test cases a product-generated plan would contain; nothing is written.',
  '1. Duplicate ids are dropped. A selected product or component that is missing or in another ' +
    'project → 422 `product_project_mismatch` / `component_project_mismatch`.',
  '2. Base components: products only → every component linked to them; components only → those; ' +
    'both → the selected components that are linked to a selected product; neither → none.',
  '3. `include_dependent_components` adds everything the base depends on, transitively.',
  '4. `minimum_risk_level` drops components below it.',
  '5. Candidates: every **active** case covering a resolved component, with reasons ' +
    '(`component_match`, `dependency_match`, `product_match`, `risk_threshold`, `mandatory_release`).',
  '6. Mode: `full` and `regression` include every candidate (`regression` adds `regression_rule`); ' +
    '`smoke` includes a candidate that is mandatory for release, has a smoke coverage or covers a ' +
    'high/critical component (`smoke_rule`).',
  '7. `explicit_include_case_ids` (active cases of the project; unknown ids ignored) are added with ' +
    '`explicit_include`; `explicit_exclude_case_ids` are removed and listed in `excluded_cases`.',
  '8. Order: mandatory first, then highest component risk score desc, then case priority desc ' +
    '(critical … low, none last), then case key (natural order).',
].join('\n\n');

/** `POST /test-plans/generate-preview` (the rest of /test-plans belongs to the test-plans module). */
@ApiTags('test-plans')
@Controller('test-plans/generate-preview')
export class PlanPreviewController {
  constructor(private readonly previews: PlanPreviewService) {}

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Preview the cases of a generated test plan',
    description: DESCRIPTION,
    minRole: 'tester',
    project: fromBody(),
    status: 200,
    response: PlanGenerationPreviewResponseDto,
    problems: ['product_project_mismatch', 'component_project_mismatch'],
  })
  async preview(
    @CurrentAccess() access: ProjectAccess,
    @Body() dto: GeneratePlanPreviewDto,
  ): Promise<PlanGenerationPreviewResponseDto> {
    return { preview: await this.previews.preview(access.projectId, dto.config) };
  }
}
