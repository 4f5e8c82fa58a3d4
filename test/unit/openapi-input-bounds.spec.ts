import 'reflect-metadata';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ITEM_MAX_LENGTH_KEY } from '../../src/common/openapi/item-limits-docs';
import { buildOpenApiDocument } from '../../src/common/openapi/openapi';
import { withPreviewApp } from '../support/preview-app';

type Schema = Record<string, unknown>;

/**
 * Every string and every array a client can send (request bodies, query parameters) declares a
 * bound in the OpenAPI document (`maxLength` / `maxItems`), so no input is unbounded and the
 * document says how large it may be (issue #22, defect 6). A string needs no `maxLength` when its
 * format or enum already bounds it (uuid, date-time, binary upload, enum).
 */
export function unboundedInputs(doc: OpenAPIObject): string[] {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  const found: string[] = [];
  const seen = new Set<string>();

  const walk = (schema: Schema | undefined, where: string): void => {
    if (!schema) return;
    const ref = schema.$ref;
    if (typeof ref === 'string') {
      const name = ref.split('/').pop() as string;
      if (seen.has(`${name}@${where}`)) return;
      seen.add(`${name}@${where}`);
      walk(schemas[name], where);
      return;
    }
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
      const list = schema[key];
      if (Array.isArray(list)) list.forEach((s: Schema) => walk(s, where));
    }
    if (schema.type === 'string') {
      const bounded =
        typeof schema.maxLength === 'number' ||
        Array.isArray(schema.enum) ||
        ['uuid', 'date-time', 'date', 'binary'].includes(String(schema.format));
      if (!bounded) found.push(`${where}: string without maxLength`);
    }
    if (schema.type === 'array') {
      if (typeof schema.maxItems !== 'number') found.push(`${where}: array without maxItems`);
      walk(schema.items as Schema | undefined, `${where}[]`);
    }
    if (schema.type === 'object' || schema.properties) {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      for (const [name, child] of Object.entries(props)) walk(child, `${where}.${name}`);
      if (
        schema.additionalProperties &&
        !schema.properties &&
        typeof schema.maxProperties !== 'number'
      ) {
        found.push(`${where}: free-form object without maxProperties`);
      }
    }
  };

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Schema>)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of (op.parameters ?? []) as Schema[]) {
        if (p.in === 'query') walk(p.schema as Schema, `${at} query.${String(p.name)}`);
      }
      const content = ((op.requestBody as Schema | undefined)?.content ?? {}) as Record<
        string,
        Schema
      >;
      for (const media of Object.values(content)) walk(media.schema as Schema, `${at} body`);
    }
  }
  return found;
}

describe('OpenAPI: bounds of every input', () => {
  let doc: OpenAPIObject;

  beforeAll(async () => {
    doc = await withPreviewApp((app) => buildOpenApiDocument(app));
  });

  it('every string has a maxLength and every array a maxItems (request bodies and queries)', () => {
    expect(unboundedInputs(doc)).toEqual([]);
  });

  it("a query list's items keep the validator's maxLength, and the carrier key is gone", () => {
    const params = (doc.paths['/api/v1/test-runs'].get?.parameters ?? []) as unknown as Schema[];
    const items = (name: string) =>
      (params.find((p) => p.name === name)?.schema as { items?: Schema } | undefined)?.items;
    expect(items('build')).toEqual({ type: 'string', maxLength: 255 });
    expect(items('environment_id')).toEqual({ type: 'string', maxLength: 100 });
    expect(items('attribute')).toEqual({ type: 'string', maxLength: 64 + 1 + 256 });
    expect(JSON.stringify(doc)).not.toContain(ITEM_MAX_LENGTH_KEY);
  });

  it("a topology's objects show their 200-key limit (README: every bound is in the schema)", () => {
    const schemas = (doc.components?.schemas ?? {}) as Record<string, Schema>;
    for (const name of ['TopologyNodeDto', 'TopologyComponentDto', 'TopologyDto']) {
      expect(schemas[name]).toMatchObject({ maxProperties: 200, additionalProperties: true });
    }
  });

  it('every numeric query parameter is an integer (QueryInt refuses 1.5), documented as one', () => {
    const numeric: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops as Record<string, Schema>)) {
        for (const p of ((op.parameters ?? []) as Schema[]).filter((q) => q.in === 'query')) {
          const type = (p.schema as Schema | undefined)?.type;
          if (type === 'number') numeric.push(`${method.toUpperCase()} ${path} ${String(p.name)}`);
        }
      }
    }
    expect(numeric).toEqual([]);
    const page = (doc.paths['/api/v1/test-runs'].get?.parameters ?? []) as unknown as Schema[];
    expect(page.find((p) => p.name === 'page_size')?.schema).toMatchObject({ type: 'integer' });
  });
});

describe('OpenAPI bounds audit', () => {
  it('finds an unbounded string, array and free-form object', () => {
    const fake = {
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: {
        '/x': {
          post: {
            parameters: [
              { in: 'query', name: 'q', schema: { type: 'string' } },
              { in: 'query', name: 'r', schema: { type: 'array', items: { type: 'string' } } },
            ],
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/B' } } },
            },
          },
        },
      },
      components: {
        schemas: {
          B: {
            type: 'object',
            properties: {
              ok: { type: 'string', maxLength: 5 },
              id: { type: 'string', format: 'uuid' },
              list: { type: 'array', items: { type: 'string' } },
              meta: { type: 'object', additionalProperties: true },
            },
          },
        },
      },
    } as unknown as OpenAPIObject;
    expect(unboundedInputs(fake)).toEqual([
      'POST /x query.q: string without maxLength',
      'POST /x query.r: array without maxItems',
      'POST /x query.r[]: string without maxLength',
      'POST /x body.list: array without maxItems',
      'POST /x body.list[]: string without maxLength',
      'POST /x body.meta: free-form object without maxProperties',
    ]);
  });
});
