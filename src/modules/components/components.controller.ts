import { Controller, Delete, Get, Param, Patch, Post, Put, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { WRITE_ANSWER_ETAG } from '../../common/openapi/conditional-docs';
import { tagWriteAnswer } from '../../common/http/conditional';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { Preconditions } from '../../common/http/preconditions';
import {
  fromBody,
  fromQuery,
  fromResource,
  ProjectAccess,
  ResourceRef,
} from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { sendJsonParts } from '../../common/http/json-body';
import { PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import { ComponentsService } from './components.service';
import {
  ComponentDto,
  ComponentGraphQueryDto,
  CreateComponentDto,
  ListComponentsQueryDto,
  RISK_FORMULA_DESCRIPTION,
  UpdateComponentDto,
} from './dto/component.dto';
import { ComponentGraphDto, DependencyListDto, ReplaceDependenciesDto } from './dto/dependency.dto';

export const COMPONENTS: ResourceRef = {
  table: 'components',
  notFound: 'component_not_found',
  label: 'Component',
};
const component = fromResource(COMPONENTS);

const KEY_RULE =
  '**Key.** The slug of the given `key`, or of the name when `key` is omitted, null or empty ' +
  '(lower case; every run of characters outside `a-z0-9` becomes one `-`; leading/trailing `-` ' +
  'dropped; at most 100 characters; `item` when nothing is left). When another component of the ' +
  'project has it, `-2`, `-3` … is appended (a given key is suffixed too, never refused); all ' +
  '1000 candidates taken → 422 `component_key_collision`. Keys of products and components are ' +
  'separate namespaces.\n\n**Owner.** `owner_id` must be an active member of the project ' +
  '(administrators without membership included), else 422 `invalid_owner`; null clears it.';

@ApiTags('components')
@Controller('components')
export class ComponentsController {
  constructor(
    private readonly components: ComponentsService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List components',
    description:
      'Filters combine with AND; repeated values of one filter match any of them. `tag` matches ' +
      'case-insensitively, `product_id` keeps components linked to any of the products, `search` ' +
      'is a substring of name, key or description. Sorted by risk: `risk_score` desc, then ' +
      '`updated_at` desc, then id desc.',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageSchema('ComponentDto') },
  })
  list(@Query() q: ListComponentsQueryDto) {
    return this.components.list(q);
  }

  // Declared before `:id` so that `graph` is never taken for a component id.
  @Get('graph')
  @Endpoint({
    summary: 'Component dependency graph of a project',
    description:
      'Every component of the project (no paging, no cap; sorted like the list) and every ' +
      'dependency edge between them (`source_component_id` depends on `target_component_id`, ' +
      'oldest first).',
    minRole: 'viewer',
    project: fromQuery(),
    response: ComponentGraphDto,
  })
  async graph(
    @CurrentAccess() access: ProjectAccess,
    @Query() _q: ComponentGraphQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    // The graph's JSON text is cached per graph version: written as it is.
    sendJsonParts(res, [await this.components.graph(access.projectId)]);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a component',
    description: `${RISK_FORMULA_DESCRIPTION}\n\n${KEY_RULE}`,
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: ComponentDto,
    problems: ['invalid_owner', 'component_key_collision'],
  })
  create(@Body() dto: CreateComponentDto): Promise<ComponentDto> {
    return this.components.create(dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a component',
    minRole: 'viewer',
    project: component,
    response: ComponentDto,
  })
  get(@Param('id') id: string): Promise<ComponentDto> {
    return this.components.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update a component (metadata and risk factors)',
    description:
      `Only the fields present change. ${RISK_FORMULA_DESCRIPTION}\n\n${KEY_RULE} Renaming alone ` +
      'keeps the key.',
    minRole: 'tester',
    project: component,
    response: ComponentDto,
    problems: ['invalid_owner', 'component_key_collision'],
  })
  async update(@Param('id') id: string, @Body() dto: UpdateComponentDto): Promise<ComponentDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: COMPONENTS, id }, () => this.components.get(id));
    return this.components.update(id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Delete a component',
    description:
      'Permanent. Also removes its product links, every dependency edge in which it is the source ' +
      'or the target, and the test-case coverages of it.',
    minRole: 'lead',
    project: component,
    status: 204,
  })
  async remove(@Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ resource: COMPONENTS, id }, () => this.components.get(id));
    return this.components.remove(id);
  }

  @Get(':id/dependencies')
  @Endpoint({
    summary: "List a component's dependencies",
    description: 'The outgoing edges (the component depends on each target), oldest first.',
    minRole: 'viewer',
    project: component,
    response: DependencyListDto,
  })
  dependencies(@Param('id') id: string): Promise<DependencyListDto> {
    return this.components.dependencies(id);
  }

  @Put(':id/dependencies')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: "Replace a component's dependencies",
    description:
      'Replaces the whole set of outgoing dependencies with the body (`[]` or no `dependencies` ' +
      'clears it) and answers the new set. Rejected, nothing changed: the same target twice → 422 `validation_error`; the ' +
      'component itself → 422 `component_dependency_cycle`; a target that is missing or in another ' +
      'project → 422 `component_project_mismatch`; a set that would close a cycle (of any length) ' +
      'in the project graph → 422 `component_dependency_cycle`, the detail spelling the cycle out. ' +
      '`dependency_type` is `depends_on` (the default; the only value).',
    minRole: 'tester',
    project: component,
    response: DependencyListDto,
    problems: ['component_dependency_cycle', 'component_project_mismatch'],
  })
  async replaceDependencies(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: ReplaceDependenciesDto,
  ): Promise<DependencyListDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: COMPONENTS, id }, () =>
      this.components.dependencies(id),
    );
    return this.components.replaceDependencies(access.projectId, id, dto);
  }
}
