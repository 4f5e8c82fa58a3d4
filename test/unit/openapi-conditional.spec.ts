import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApiDocument } from '../../src/common/openapi/openapi';
import { withPreviewApp } from '../support/preview-app';

type Json = Record<string, unknown>;

/** The writes issue #19 §2 names: each honours If-Match. */
const IF_MATCH_WRITES = [
  'PATCH /api/v1/test-runs/{id}',
  'DELETE /api/v1/test-runs/{id}',
  'PATCH /api/v1/run-cases/{id}',
  'DELETE /api/v1/run-cases/{id}',
  'PATCH /api/v1/run-cases/rows/{row_id}',
  'PATCH /api/v1/environments/{id}',
  'DELETE /api/v1/environments/{id}',
  'PATCH /api/v1/components/{id}',
  'DELETE /api/v1/components/{id}',
  'PUT /api/v1/components/{id}/dependencies',
  'PATCH /api/v1/products/{id}',
  'DELETE /api/v1/products/{id}',
  'PUT /api/v1/products/{id}/components',
  'PATCH /api/v1/test-cases/{id}',
  'DELETE /api/v1/test-cases/{id}',
  'PATCH /api/v1/datasets/{id}',
  'DELETE /api/v1/datasets/{id}',
  'PATCH /api/v1/test-plans/{id}',
  'DELETE /api/v1/test-plans/{id}',
];

function operation(doc: OpenAPIObject, at: string): Json {
  const [method, path] = at.split(' ');
  const op = (doc.paths[path] as Record<string, Json> | undefined)?.[method.toLowerCase()];
  if (op === undefined) throw new Error(`${at} is not in the document`);
  return op;
}

const headerParam = (op: Json, name: string) =>
  ((op.parameters ?? []) as Json[]).find((p) => p.in === 'header' && p.name === name);

describe('OpenAPI: conditional requests', () => {
  let doc: OpenAPIObject;
  beforeAll(async () => {
    doc = await withPreviewApp((app) => buildOpenApiDocument(app));
  });

  /** Streamed downloads: no hash of the body exists before its headers go out. */
  const STREAMED = ['/api/v1/test-runs/{id}/export'];

  it('every GET answering 200 documents If-None-Match, its ETag and Vary, and the 304', () => {
    const missing: string[] = [];
    let gets = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const op = (item as Record<string, Json>).get;
      const responses = op?.responses as Record<string, Json> | undefined;
      if (op === undefined || responses?.['200'] === undefined || STREAMED.includes(path)) continue;
      gets++;
      const headers = (responses['200'].headers ?? {}) as Json;
      if (!headerParam(op, 'If-None-Match')) missing.push(`GET ${path} If-None-Match`);
      if (!('ETag' in headers) || !('Vary' in headers)) missing.push(`GET ${path} 200 headers`);
      if (responses['304'] === undefined) missing.push(`GET ${path} 304`);
    }
    expect(gets).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });

  it.each(STREAMED)('GET %s (a streamed download) documents Vary only: no ETag, no 304', (path) => {
    const op = operation(doc, `GET ${path}`);
    const responses = op.responses as Record<string, Json>;
    // Vary and the download's name: no ETag.
    expect(Object.keys((responses['200'].headers ?? {}) as Json).sort()).toEqual([
      'Content-Disposition',
      'Vary',
    ]);
    expect(headerParam(op, 'If-None-Match')).toBeUndefined();
    expect(responses['304']).toBeUndefined();
    expect(op).not.toHaveProperty('x-tms-no-etag');
  });

  it.each(IF_MATCH_WRITES)('%s documents If-Match and 412 precondition_failed with ETag', (at) => {
    const op = operation(doc, at);
    expect(headerParam(op, 'If-Match')).toMatchObject({ required: false });
    const failed = (op.responses as Record<string, Json>)['412'];
    expect(failed.description).toContain('precondition_failed');
    expect(failed.headers).toHaveProperty('ETag');
  });

  it('only those writes document If-Match (the others do not honour it)', () => {
    const documented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of ['put', 'patch', 'delete', 'post']) {
        const op = (item as Record<string, Json>)[method];
        if (op !== undefined && headerParam(op, 'If-Match')) {
          documented.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(documented.sort()).toEqual([...IF_MATCH_WRITES].sort());
  });
});
