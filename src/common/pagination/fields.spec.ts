import { AppException } from '../errors/app-exception';
import { validateInput } from '../validation/validate';
import { CURSOR_MAX_LENGTH } from './cursor';
import { CursorPageQueryDto } from './cursor-query';
import { FieldsParam, fieldSelection, parseFieldsParam, pickFields, selects } from './fields';

const ALLOWED = ['id', 'name', 'status', 'snapshot', 'created_at'];

class Q extends CursorPageQueryDto {
  @FieldsParam(ALLOWED, 'the thing')
  fields?: string[];
}

/** The validated query, or the refused paths with their messages. */
function validate(query: Record<string, unknown>): Q | Record<string, string[]> {
  try {
    return validateInput(Q, query, 'query');
  } catch (e) {
    if (e instanceof AppException) return e.errors ?? {};
    throw e;
  }
}

describe('fields (sparse fields)', () => {
  it.each<[string, unknown, unknown]>([
    ['absent', undefined, undefined],
    ['one name', 'id', ['id']],
    ['comma-separated, trimmed, deduplicated', ' name , id,name', ['name', 'id']],
    ['repeated parameter', ['id', 'name,status'], ['id', 'name', 'status']],
    ['blank: every field', '', undefined],
    ['only commas: every field', ',,', undefined],
  ])('parses %s', (_name, raw, expected) => {
    expect(parseFieldsParam(raw)).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['known names', { fields: 'status,id' }, { fields: ['status', 'id'] }],
    ['blank', { fields: '' }, { fields: undefined }],
    [
      'unknown names are named',
      { fields: 'id,foo,bar' },
      { 'query.fields': [expect.stringContaining('unknown names: foo, bar (known: id, name')] },
    ],
    [
      'a value too long',
      { fields: `id,${' '.repeat(2000)}` },
      { 'query.fields': [expect.stringContaining('at most 2000 characters')] },
    ],
    [
      'too many names',
      { fields: Array.from({ length: 101 }, (_, i) => `f${i}`).join(',') },
      { 'query.fields': ['fields must name at most 100 fields'] },
    ],
  ])('%s', (_name, query, expected) => {
    expect(validate(query)).toMatchObject(expected as object);
  });

  it('selection: the schema order is kept, whatever the order listed', () => {
    const obj = { id: 1, name: 'n', status: 's', snapshot: {}, created_at: 't' };
    const sel = fieldSelection(['created_at', 'id']);
    expect(Object.keys(pickFields(obj, sel))).toEqual(['id', 'created_at']);
    expect(pickFields(obj, fieldSelection(undefined))).toBe(obj);
    expect(selects(sel, 'snapshot')).toBe(false);
    expect(selects(null, 'snapshot')).toBe(true);
  });
});

describe('cursor with page', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['cursor alone', { cursor: '' }, { cursor: '', page: 1, page_size: 50 }],
    ['page alone', { page: '2' }, { page: 2 }],
    ['cursor and page_size', { cursor: 'x', page_size: '10' }, { cursor: 'x', page_size: 10 }],
    [
      'cursor and page',
      { cursor: '', page: '1' },
      { 'query.cursor': ['cursor and page cannot be given together: page by one or the other'] },
    ],
    [
      'a cursor at the bound',
      { cursor: 'x'.repeat(CURSOR_MAX_LENGTH) },
      { cursor: 'x'.repeat(CURSOR_MAX_LENGTH) },
    ],
    [
      'a cursor too long',
      { cursor: 'x'.repeat(CURSOR_MAX_LENGTH + 1) },
      { 'query.cursor': [`cursor must be a string of at most ${CURSOR_MAX_LENGTH} characters`] },
    ],
    [
      'a repeated cursor',
      { cursor: ['a', 'b'] },
      { 'query.cursor': ['cursor must be given once'] },
    ],
  ])('%s', (_name, query, expected) => {
    expect(validate(query)).toMatchObject(expected as object);
  });
});
