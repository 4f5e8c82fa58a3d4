import { Controller, Delete, Get, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
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
import { PageSchema } from '../../common/pagination/page';
import { Transactional } from '../../common/persistence/transaction.interceptor';
import { Body, Query } from '../../common/validation/request-parts';
import {
  CreateProductDto,
  ListProductsQueryDto,
  ProductComponentLinkListDto,
  ProductDto,
  ProductSummaryDto,
  ReplaceProductComponentsDto,
  SUMMARY_DESCRIPTION,
  UpdateProductDto,
} from './dto/product.dto';
import { ProductsService } from './products.service';

export const PRODUCTS: ResourceRef = {
  table: 'products',
  notFound: 'product_not_found',
  label: 'Product',
};
const product = fromResource(PRODUCTS);

const SNAPSHOT =
  '`summary_snapshot` holds five figures of the product summary (`GET /products/{id}/summary`), ' +
  'computed the same way: `total_components`, `adequately_covered_components`, ' +
  '`uncovered_components` (below the required coverage score, including components without cases), ' +
  '`high_risk_uncovered_components` and `mandatory_release_cases`; only active test cases count.';

const KEY_RULE =
  '**Key.** The slug of the given `key`, or of the name when `key` is omitted, null or empty ' +
  '(lower case; every run of characters outside `a-z0-9` becomes one `-`; leading/trailing `-` ' +
  'dropped; at most 100 characters; `item` when nothing is left). When another product of the ' +
  'project has it, `-2`, `-3` … is appended (a given key is suffixed too, never refused); all ' +
  '1000 candidates taken → 422 `product_key_collision`. Keys of products and components are ' +
  'separate namespaces.\n\n**Owner.** `owner_id` must be an active member of the project (an ' +
  'administrator who is not a member is refused too), else 422 `invalid_owner`; null clears it.';

@ApiTags('products')
@Controller('products')
export class ProductsController {
  constructor(
    private readonly products: ProductsService,
    private readonly preconditions: Preconditions,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List products',
    description:
      'Filters combine with AND; repeated values of one filter match any of them. `tag` matches ' +
      'case-insensitively; `search` is a substring of name, key or description. Sorted by ' +
      `\`updated_at\` desc, then id desc. ${SNAPSHOT} The snapshots of a page are aggregated in one query.`,
    minRole: 'viewer',
    project: fromQuery(),
    response: { schema: PageSchema('ProductDto') },
  })
  list(@Query() q: ListProductsQueryDto) {
    return this.products.list(q);
  }

  @Post()
  @Transactional()
  @Endpoint({
    summary: 'Create a product',
    description: KEY_RULE,
    minRole: 'tester',
    project: fromBody(),
    status: 201,
    response: ProductDto,
    problems: ['invalid_owner', 'product_key_collision'],
  })
  create(@Body() dto: CreateProductDto): Promise<ProductDto> {
    return this.products.create(dto);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a product',
    description: SNAPSHOT,
    minRole: 'viewer',
    project: product,
    response: ProductDto,
  })
  get(@Param('id') id: string): Promise<ProductDto> {
    return this.products.get(id);
  }

  @Patch(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: 'Update a product',
    description: `Only the fields present change. ${KEY_RULE} Renaming alone keeps the key.`,
    minRole: 'tester',
    project: product,
    response: ProductDto,
    problems: ['invalid_owner', 'product_key_collision'],
  })
  async update(@Param('id') id: string, @Body() dto: UpdateProductDto): Promise<ProductDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: PRODUCTS, id }, () => this.products.get(id));
    return this.products.update(id, dto);
  }

  @Delete(':id')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    summary: 'Delete a product',
    description:
      'Permanent. Its component links are removed; the components themselves stay. Test cases ' +
      'that named it as their primary product keep existing without it.',
    minRole: 'lead',
    project: product,
    status: 204,
  })
  async remove(@Param('id') id: string): Promise<void> {
    await this.preconditions.ifMatch({ resource: PRODUCTS, id }, () => this.products.get(id));
    return this.products.remove(id);
  }

  @Get(':id/components')
  @Endpoint({
    summary: "List a product's component links",
    description:
      '`{items}`: each link with its id, `is_core`, `sort_order` and the component it names (key, ' +
      'name, status, risk). Ordered by `sort_order`, then in the order the links were given.',
    minRole: 'viewer',
    project: product,
    response: ProductComponentLinkListDto,
  })
  links(@Param('id') id: string): Promise<ProductComponentLinkListDto> {
    return this.products.links(id);
  }

  @Put(':id/components')
  @Transactional()
  @Endpoint({
    ifMatch: true,
    responseHeaders: { ETag: WRITE_ANSWER_ETAG },
    summary: "Replace a product's component links",
    description:
      'Replaces every link with the body (`[]` or no `links` removes all) and answers the new ' +
      'list, ordered like the GET. Rejected, nothing changed: a component listed twice → 422 ' +
      "`validation_error`; a component that is missing or in another project than the product's " +
      '→ 422 `component_project_mismatch` (each offending entry named as ' +
      '`links.<i>.component_id`). `is_core` defaults to false, `sort_order` to 0. Does not change ' +
      "the product's `updated_at`.",
    minRole: 'tester',
    project: product,
    response: ProductComponentLinkListDto,
    problems: ['component_project_mismatch'],
  })
  async replaceLinks(
    @CurrentAccess() access: ProjectAccess,
    @Param('id') id: string,
    @Body() dto: ReplaceProductComponentsDto,
  ): Promise<ProductComponentLinkListDto> {
    // The answer is the resource as its GET answers it: its ETag makes the next write conditional.
    tagWriteAnswer();
    await this.preconditions.ifMatch({ resource: PRODUCTS, id }, () => this.products.links(id));
    return this.products.replaceLinks(access.projectId, id, dto);
  }

  @Get(':id/summary')
  @Endpoint({
    summary: 'Coverage summary of a product',
    description: SUMMARY_DESCRIPTION,
    minRole: 'viewer',
    project: product,
    response: ProductSummaryDto,
  })
  summary(@Param('id') id: string): Promise<ProductSummaryDto> {
    return this.products.summary(id);
  }
}
