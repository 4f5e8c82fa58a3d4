import { Controller, Delete, Get, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
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
import { AuthenticatedUser } from '../../common/auth/authenticated-user';
import { CurrentAccess, CurrentUser } from '../../common/auth/current-user.decorator';
import { Page, PageSchema } from '../../common/pagination/page';
import { CURSOR_PAGING_NOTE, PageOrCursorSchema } from '../../common/pagination/cursor-query';
import { CursorPage } from '../../common/pagination/keyset';
import { withNextLink } from '../../common/pagination/link';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  CreateEnvironmentDto,
  EnvironmentDto,
  EnvironmentRevisionDto,
  EnvironmentRevisionListItemDto,
  ListEnvironmentsQueryDto,
  ListRevisionsQueryDto,
  UpdateEnvironmentDto,
  UseCasesDto,
  UseCasesQueryDto,
} from './dto/environment.dto';
import { EnvironmentsService } from './environments.service';

export const ENVIRONMENTS: ResourceRef = {
  table: 'environments',
  notFound: 'environment_not_found',
  label: 'Environment',
};

const environment = fromResource(ENVIRONMENTS);

const REVISION_RULES =
  'Every environment response reads from its **current revision**. Revision 1 is written on ' +
  'create (`revision_note` `Initial revision`); afterwards a new revision is written **only when ' +
  'the snapshot changes**, i.e. when its `snapshot_hash` differs, with `revision_note` ' +
  '`Changed: <top-level fields>` (e.g. `Changed: topology, tags`). Revision numbers are ' +
  'contiguous from 1; exactly one revision is current. The snapshot is `{environment: {name, ' +
  'kind, status, description, tags, use_cases, schema_version, meta, extra}, topology, ' +
  'project_id}` and `snapshot_hash` is `sha256:` + the lowercase hex SHA-256 of its canonical ' +
  'JSON (keys sorted recursively, no whitespace, non-ASCII escaped as `\\uXXXX`).';

@ApiTags('environments')
@ApiExtraModels(EnvironmentDto, EnvironmentRevisionListItemDto)
@Controller('environments')
export class EnvironmentsController {
  constructor(
    private readonly environments: EnvironmentsService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List environments',
    description:
      'Archived environments are hidden unless `include_archived=true`. `search` matches a ' +
      'case-insensitive substring of the name or description; repeated `use_case` values match ' +
      'environments having any of them (exact element match). Default sort `created_at desc`; ' +
      '`name` sorts case-insensitively; ties are broken by id. ' +
      CURSOR_PAGING_NOTE +
      ' `fields` answers only the named fields of each environment; without `topology` (the ' +
      'large part) the topology is not read.',
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageOrCursorSchema('EnvironmentDto') },
    problems: ['invalid_cursor'],
  })
  async list(
    @Query() q: ListEnvironmentsQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Page<Partial<EnvironmentDto>> | CursorPage<Partial<EnvironmentDto>>> {
    return withNextLink(req, res, await this.environments.list(q));
  }

  @Get('use-cases')
  @Endpoint({
    summary: 'List the use case values of a project’s environments (for filters)',
    description:
      'Distinct values (case-sensitive), sorted case-insensitively; archived environments count ' +
      'only with `include_archived=true`.',
    minRole: 'viewer',
    project: fromQuery(),
    response: UseCasesDto,
  })
  useCases(@Query() q: UseCasesQueryDto): Promise<UseCasesDto> {
    return this.environments.useCases(q);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create an environment and its initial revision',
    description:
      `${REVISION_RULES}\n\nUnknown fields (including \`schema_version\`) are rejected. ` +
      'Creating with `status` `archived` needs the lead role and creates an archived environment.',
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: EnvironmentDto,
  })
  create(
    @CurrentUser() user: AuthenticatedUser,
    @CurrentAccess() access: ProjectAccess,
    @Body() dto: CreateEnvironmentDto,
  ): Promise<EnvironmentDto> {
    return this.environments.create(user, access, dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get an environment (archived ones too)',
    description: REVISION_RULES,
    minRole: 'viewer',
    project: environment,
    response: EnvironmentDto,
  })
  get(@Param('id') id: string): Promise<EnvironmentDto> {
    return this.environments.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update an environment; a new revision is written when the snapshot changes',
    description:
      `${REVISION_RULES}\n\nOnly the fields present change; each replaces the previous value ` +
      'wholesale (no deep merge of topology, meta or extra); `description: null` clears it; ' +
      'other explicit nulls, `project_id` and `schema_version` are rejected. A PATCH that ' +
      'changes nothing answers 200 with the same current revision. Changing `status` to ' +
      '`archived` (sets `archived_at`) or from `archived` to another value (restores, clears ' +
      '`archived_at`) needs the lead role. Concurrent PATCHes of one environment are serialised ' +
      'by a row lock, so no change is lost.',
    minRole: 'tester',
    project: environment,
    response: EnvironmentDto,
  })
  async update(
    @CurrentUser() user: AuthenticatedUser,
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: UpdateEnvironmentDto,
  ): Promise<EnvironmentDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: ENVIRONMENTS, id }, () =>
      this.environments.get(id),
    );
    return this.environments.update(user, access, id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Archive an environment',
    description:
      'Sets `status` to `archived` and `archived_at`, recorded by a new revision. The environment, ' +
      'its revisions and the runs referring to it are kept; it stays readable by id but is hidden ' +
      'from lists. Archiving an archived environment changes nothing (204).',
    minRole: 'lead',
    project: environment,
    status: 204,
  })
  async archive(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ resource: ENVIRONMENTS, id }, () =>
      this.environments.get(id),
    );
    return this.environments.archive(user, id);
  }

  @Get(':id/revisions')
  @Endpoint({
    summary: 'List the revisions of an environment, newest first',
    description:
      'Items carry `entities_count` and `edges_count` instead of `full_snapshot`, `entities` and ' +
      '`edges` (get one revision for those).',
    minRole: 'viewer',
    project: environment,
    response: { schema: PageSchema('EnvironmentRevisionListItemDto') },
  })
  revisions(
    @Param('id') id: string,
    @Query() q: ListRevisionsQueryDto,
  ): Promise<Page<EnvironmentRevisionListItemDto>> {
    return this.environments.revisions(id, q);
  }

  @Get(':id/revisions/:revision_number')
  @ApiParam({ name: 'revision_number', schema: { type: 'integer', minimum: 1 } })
  @Endpoint({
    summary: 'Get one revision of an environment',
    description:
      '`revision_number` must be a positive integer (422 `path.revision_number`); a number the ' +
      'environment does not have is 404 `environment_revision_not_found`. Entities and edges are ' +
      'derived from the revision’s topology (components, their nodes as `host` entities, ' +
      '`contains` edges, plus custom `topology.entities`/`topology.edges`).',
    minRole: 'viewer',
    project: environment,
    response: EnvironmentRevisionDto,
    problems: ['environment_revision_not_found'],
    pathIntegers: ['revision_number'],
  })
  revision(
    @Param('id') id: string,
    @Param('revision_number') revisionNumber: string,
  ): Promise<EnvironmentRevisionDto> {
    return this.environments.revision(id, revisionNumber);
  }
}
