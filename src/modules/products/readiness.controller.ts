import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/access/endpoint.decorator';
import { fromResource, ProjectAccess } from '../../common/access/project-access';
import { CurrentAccess } from '../../common/auth/current-user.decorator';
import { Query } from '../../common/validation/request-parts';
import { READINESS_RULES, ReadinessDto, ReadinessQueryDto } from './dto/readiness.dto';
import { PRODUCTS } from './products.controller';
import { ProductsService } from './products.service';

/** Release readiness (issue #17 §5): the gate a CI pipeline calls before a release. */
@ApiTags('products')
@Controller('products')
export class ReadinessController {
  constructor(private readonly products: ProductsService) {}

  @Get(':id/readiness')
  @Endpoint({
    summary: 'Is the product ready to ship? (release gate)',
    description:
      READINESS_RULES +
      ' An `environment_id` that is not an environment of the product’s project is 422 ' +
      '`invalid_environment`; a malformed query is 422 `validation_error` (`query.<field>`).',
    minRole: 'viewer',
    project: fromResource(PRODUCTS),
    response: ReadinessDto,
    problems: ['invalid_environment'],
  })
  readiness(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Query() q: ReadinessQueryDto,
  ): Promise<ReadinessDto> {
    return this.products.readiness(access, id, q);
  }
}
