import { AppException } from '../errors/app-exception';
import { validateInput } from '../validation/validate';
import { PageQueryDto, RowPageQueryDto } from './page';

/** A list query extending the row page, as the feature DTOs do. */
class RowListQueryDto extends RowPageQueryDto {}

/** The paging rules of a query, and how it pages: `{ page, page_size }` or the refused fields. */
function paging(
  cls: typeof PageQueryDto | typeof RowPageQueryDto,
  query: Record<string, string>,
): { page: number; page_size: number } | string[] {
  try {
    const q = validateInput(cls, query, 'query');
    return { page: q.page, page_size: q.page_size };
  } catch (e) {
    if (!(e instanceof AppException)) throw e;
    return Object.keys(e.errors ?? {})
      .map((k) => k.replace(/^query\./, ''))
      .sort();
  }
}

describe('PageQueryDto and RowPageQueryDto (one declaration of `page`)', () => {
  it.each<[string, typeof PageQueryDto, Record<string, string>, unknown]>([
    ['list defaults', PageQueryDto, {}, { page: 1, page_size: 50 }],
    ['list page_size 200', PageQueryDto, { page_size: '200' }, { page: 1, page_size: 200 }],
    ['list page_size 201', PageQueryDto, { page_size: '201' }, ['page_size']],
    ['list page 0', PageQueryDto, { page: '0' }, ['page']],
    ['rows defaults', RowPageQueryDto, {}, { page: 1, page_size: 100 }],
    ['rows page 3', RowPageQueryDto, { page: '3' }, { page: 3, page_size: 100 }],
    ['rows page_size 500', RowPageQueryDto, { page_size: '500' }, { page: 1, page_size: 500 }],
    ['rows page_size 501', RowPageQueryDto, { page_size: '501' }, ['page_size']],
    ['rows page_size 0', RowPageQueryDto, { page_size: '0' }, ['page_size']],
    ['rows page 0', RowPageQueryDto, { page: '0' }, ['page']],
    ['rows page x', RowPageQueryDto, { page: 'x' }, ['page']],
    [
      'subclass of rows page_size 500',
      RowListQueryDto,
      { page_size: '500' },
      { page: 1, page_size: 500 },
    ],
    ['subclass of rows page_size 501', RowListQueryDto, { page_size: '501' }, ['page_size']],
    ['subclass of rows defaults', RowListQueryDto, {}, { page: 1, page_size: 100 }],
  ])('%s', (_name, cls, query, expected) => {
    expect(paging(cls, query)).toEqual(expected);
  });
});
