import { Controller, Get, Param } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromResource } from '../../common/access/project-access';
import { Query } from '../../common/validation/request-parts';
import {
  REVISION_DIFF_RULES,
  RevisionDiffDto,
  RevisionDiffQueryDto,
} from './dto/revision-diff.dto';
import { ENVIRONMENTS } from './environments.controller';
import { EnvironmentsService } from './environments.service';

/** Environment drift (issue #17 §2): what changed between two revisions of an environment. */
@ApiTags('environments')
@Controller('environments')
export class EnvironmentDriftController {
  constructor(private readonly environments: EnvironmentsService) {}

  @Get(':id/revisions/:revision_number/diff')
  @ApiParam({ name: 'revision_number', schema: { type: 'integer', minimum: 1 } })
  @Endpoint({
    summary: 'What changed between two revisions of an environment',
    description:
      'The `to` side is `revision_number`, the `from` side `against` (default: the previous ' +
      'revision; on revision 1 without `against`, every field is reported as `added`). ' +
      '`against` equal to `revision_number` is identical with no changes. ' +
      REVISION_DIFF_RULES +
      ' `revision_number` must be a positive integer (422 `path.revision_number`), `against` ' +
      'too (422 `query.against`); a number the environment does not have, on either side, is ' +
      '404 `environment_revision_not_found`.',
    minRole: 'viewer',
    project: fromResource(ENVIRONMENTS),
    response: RevisionDiffDto,
    problems: ['environment_revision_not_found'],
    pathIntegers: ['revision_number'],
  })
  diff(
    @Param('id') id: string,
    @Param('revision_number') revisionNumber: string,
    @Query() q: RevisionDiffQueryDto,
  ): Promise<RevisionDiffDto> {
    return this.environments.revisionDiff(id, revisionNumber, q);
  }
}
