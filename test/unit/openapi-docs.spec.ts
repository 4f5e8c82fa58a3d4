import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import {
  ALSO_NOT_FOUND,
  ERROR_CATALOGUE,
  type ErrorCode,
} from '../../src/common/errors/error-codes';
import { FAVICON_ICO } from '../../src/common/openapi/favicon';
import {
  buildOpenApiDocument,
  ERRORS_PAGE_PATH,
  errorsPageHtml,
  redocHtml,
} from '../../src/common/openapi/openapi';
import { withPreviewApp } from '../support/preview-app';
import { sourcesMatching } from '../support/validation';

type Json = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const PROBLEM_FIELDS = ['type', 'title', 'status', 'detail', 'instance', 'code', 'request_id'];

function operations(doc: OpenAPIObject): Array<{ at: string; op: Json }> {
  const out: Array<{ at: string; op: Json }> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      if (METHODS.includes(method)) out.push({ at: `${method.toUpperCase()} ${path}`, op });
    }
  }
  return out;
}

/**
 * Every documented problem response (4xx/5xx) carries examples of its own status: each example's
 * `status` is the response's, its `code` is a catalogue code of that status, it has every problem
 * field; the first (shown by default) 404 example is a `*_not_found` code and the first 422 example
 * `validation_error` with `errors`.
 */
export function problemExampleFindings(doc: OpenAPIObject): string[] {
  const found: string[] = [];
  for (const { at, op } of operations(doc)) {
    for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
      const s = Number(status);
      if (s < 400) continue;
      const media = (response.content as Record<string, Json> | undefined)?.[
        'application/problem+json'
      ];
      const examples = Object.values((media?.examples ?? {}) as Record<string, { value: Json }>);
      if (examples.length === 0) {
        found.push(`${at} ${status}: no example`);
        continue;
      }
      for (const { value } of examples) {
        const code = String(value.code);
        const entry = (ERROR_CATALOGUE as Record<string, { status: number }>)[code];
        if (value.status !== s)
          found.push(`${at} ${status}: example ${code} has status ${String(value.status)}`);
        const also404 = s === 404 && ALSO_NOT_FOUND.has(code as ErrorCode);
        if (!entry || (entry.status !== s && !also404))
          found.push(`${at} ${status}: ${code} is not a ${status} code`);
        const missing = PROBLEM_FIELDS.filter((f) => !(f in value));
        if (missing.length)
          found.push(`${at} ${status}: example ${code} lacks ${missing.join(', ')}`);
      }
      const first = examples[0].value;
      if (s === 404 && !String(first.code).endsWith('_not_found')) {
        found.push(`${at} 404: first example is ${String(first.code)}`);
      }
      if (s === 422 && (first.code !== 'validation_error' || !first.errors)) {
        found.push(`${at} 422: first example is not validation_error with errors`);
      }
    }
  }
  return found;
}

/**
 * Every operation states its security: `[]` for a public one (its description says "No
 * authentication."), otherwise exactly the two alternatives bearer and X-API-Key.
 */
export function securityFindings(doc: OpenAPIObject): string[] {
  const found: string[] = [];
  for (const { at, op } of operations(doc)) {
    const security = op.security as Json[] | undefined;
    const isPublic = String(op.description ?? '').includes('No authentication.');
    if (!Array.isArray(security)) found.push(`${at}: no security`);
    else if (isPublic && security.length !== 0)
      found.push(`${at}: public but requires ${JSON.stringify(security)}`);
    else if (
      !isPublic &&
      JSON.stringify(security) !== JSON.stringify([{ bearer: [] }, { api_key: [] }])
    ) {
      found.push(`${at}: security ${JSON.stringify(security)}`);
    }
  }
  return found;
}

/** Pairs of paths that match the same URL when a parameter takes a literal segment's value. */
export function ambiguousPaths(doc: OpenAPIObject): string[] {
  const paths = Object.keys(doc.paths);
  const segs = (p: string) => p.split('/');
  const isParam = (s: string) => /^\{[^}]+\}$/.test(s);
  const found: string[] = [];
  for (let i = 0; i < paths.length; i++) {
    for (let j = i + 1; j < paths.length; j++) {
      const a = segs(paths[i]);
      const b = segs(paths[j]);
      if (a.length !== b.length) continue;
      let aWins = false;
      let bWins = false;
      let match = true;
      for (let k = 0; k < a.length && match; k++) {
        if (a[k] === b[k] || (isParam(a[k]) && isParam(b[k]))) continue;
        if (isParam(a[k])) bWins = true;
        else if (isParam(b[k])) aWins = true;
        else match = false;
      }
      // Ambiguous: each path is more specific somewhere, so neither always wins.
      if (match && aWins && bWins) found.push([paths[i], paths[j]].sort().join(' ~ '));
    }
  }
  return found.sort();
}

/** The pairs redocly.yaml explains (no-ambiguous-paths is off there for them only). */
const ALLOWED_AMBIGUOUS = [
  '/api/v1/run-cases/rows/{row_id} ~ /api/v1/run-cases/{id}/rerun',
  '/api/v1/run-cases/rows/{row_id} ~ /api/v1/run-cases/{id}/rows',
];

/** Property schemas that say `object` but carry string constraints (a `string | null` without `type`). */
export function mistypedProperties(doc: OpenAPIObject): string[] {
  const found: string[] = [];
  for (const [name, schema] of Object.entries(
    (doc.components?.schemas ?? {}) as Record<string, Json>,
  )) {
    for (const [prop, p] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
      if (
        p.type === 'object' &&
        ('maxLength' in p || 'format' in p || typeof p.example === 'string')
      ) {
        found.push(`${name}.${prop}`);
      }
    }
  }
  return found;
}

describe('OpenAPI document: docs that read well', () => {
  let doc: OpenAPIObject;

  beforeAll(async () => {
    doc = await withPreviewApp((app) => buildOpenApiDocument(app));
  });

  it('declares bearer and X-API-Key security schemes, and every operation its security', () => {
    expect(doc.components?.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      api_key: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
    expect(securityFindings(doc)).toEqual([]);
    expect(doc.paths['/api/v1/auth/login'].post?.security).toEqual([]);
    expect(doc.paths['/api/v1/projects'].get?.security).toEqual([{ bearer: [] }, { api_key: [] }]);
  });

  it('has a servers entry', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('shows each problem response with examples of its own status and code', () => {
    expect(problemExampleFindings(doc)).toEqual([]);
    const responses = doc.paths['/api/v1/projects/{id}'].patch?.responses as unknown as Record<
      string,
      Json
    >;
    const firstCode = (status: string) => {
      const media = (responses[status].content as Record<string, Json>)['application/problem+json'];
      return Object.values(media.examples as Record<string, { value: Json }>)[0].value.code;
    };
    expect(firstCode('401')).toBe('unauthorized');
    expect(firstCode('403')).toBe('insufficient_project_role');
    expect(firstCode('404')).toBe('project_not_found');
    expect(firstCode('422')).toBe('validation_error');
    expect(firstCode('503')).toBe('database_unavailable');
  });

  it('documents the headers clients rely on: 401 WWW-Authenticate, Retry-After, Location, ETag, Content-Disposition', () => {
    const headersOf = (path: string, method: string, status: string) =>
      Object.keys(
        ((doc.paths[path] as Record<string, Json>)[method].responses as Record<string, Json>)[
          status
        ].headers ?? {},
      );
    for (const { at, op } of operations(doc)) {
      const unauthorized = (op.responses as Record<string, Json>)['401'];
      if (unauthorized)
        expect([at, Object.keys(unauthorized.headers ?? {})]).toEqual([
          at,
          expect.arrayContaining(['WWW-Authenticate']),
        ]);
      const unavailable = (op.responses as Record<string, Json>)['503'];
      if (unavailable)
        expect([at, Object.keys(unavailable.headers ?? {})]).toEqual([
          at,
          expect.arrayContaining(['Retry-After']),
        ]);
    }
    expect(headersOf('/api/v1/auth/login', 'post', '429')).toEqual(['Retry-After']);
    for (const path of [
      '/api/v1/test-runs/{id}/imports/junit',
      '/api/v1/projects/{id}/imports/junit',
    ])
      expect(headersOf(path, 'post', '202')).toEqual(
        expect.arrayContaining(['Location', 'Preference-Applied']),
      );
    expect(headersOf('/api/v1/run-cases/rows/{row_id}', 'patch', '200')).toEqual(['ETag']);
    expect(headersOf('/api/v1/test-runs/{id}/export', 'get', '200')).toEqual(
      expect.arrayContaining(['Content-Disposition', 'Vary']),
    );
  });

  it('documents a code answered as 404 on the operation that answers it so', () => {
    const op = (
      doc.paths['/api/v1/datasets/{id}/revisions/{revision_number}'] as Record<string, Json>
    ).get;
    const notFound = (op.responses as Record<string, Json>)['404'];
    const examples = (notFound.content as Record<string, Json>)['application/problem+json']
      .examples as Record<string, { value: Json }>;
    expect(examples.dataset_revision_not_found.value).toMatchObject({
      status: 404,
      code: 'dataset_revision_not_found',
    });
  });

  it('admits the partial objects a `fields` answer holds (nothing required) wherever `fields` is taken', () => {
    const schemas = doc.components?.schemas as Record<string, Json>;
    const sparse = operations(doc).filter(({ op }) =>
      ((op.parameters ?? []) as Json[]).some((p) => p.name === 'fields' && p.in === 'query'),
    );
    expect(sparse.map((s) => s.at).sort()).toEqual(
      expect.arrayContaining([
        'GET /api/v1/test-runs',
        'GET /api/v1/test-runs/{id}',
        'GET /api/v1/environments',
        'GET /api/v1/datasets',
      ]),
    );
    for (const { at, op } of sparse) {
      const text = JSON.stringify((op.responses as Record<string, Json>)['200']);
      const partials = [...text.matchAll(/"#\/components\/schemas\/(\w+Fields)"/g)].map(
        (m) => m[1],
      );
      expect([at, partials.length > 0]).toEqual([at, true]);
      for (const name of partials) {
        expect(schemas[name].required).toBeUndefined();
        expect(Object.keys(schemas[name].properties as Json)).toEqual(
          Object.keys(schemas[name.replace(/Fields$/, '')].properties as Json),
        );
      }
    }
  });

  it('documents 400, 413 and 415 on every POST, PUT and PATCH (a body sent to one without a request body is checked too)', () => {
    const missing: string[] = [];
    for (const { at, op } of operations(doc)) {
      if (!/^(POST|PUT|PATCH) /.test(at)) continue;
      const responses = op.responses as Record<string, Json>;
      for (const [status, code] of [
        ['400', 'invalid_content_encoding'],
        ['413', 'payload_too_large'],
        ['415', 'unsupported_media_type'],
      ]) {
        const media = (responses[status]?.content as Record<string, Json> | undefined)?.[
          'application/problem+json'
        ];
        if (!media || !(code in ((media.examples as Json | undefined) ?? {})))
          missing.push(`${at} ${code}`);
      }
    }
    expect(missing).toEqual([]);
  });

  // Found by an audit: five integer fields were documented as `number` without their maximum, so a
  // client built from the document sent 1.5 or 2^31 and met a 422.
  it('documents every integer field of a request body as an integer, with the bounds of its validator', async () => {
    const schemas = doc.components?.schemas as Record<
      string,
      { properties?: Record<string, Json> }
    >;
    const drift: string[] = [];
    let checked = 0;
    for (const file of sourcesMatching(join(__dirname, '../../src/modules'), /@IsInt\(/)) {
      const exported = (await import(join(__dirname, '../../src/modules', file))) as Record<
        string,
        unknown
      >;
      for (const cls of Object.values(exported)) {
        if (typeof cls !== 'function' || schemas[cls.name]?.properties === undefined) continue;
        const metas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
        for (const meta of metas.filter((m) => m.name === 'isInt')) {
          const documented = schemas[cls.name].properties?.[meta.propertyName];
          if (documented === undefined) continue;
          checked += 1;
          const bound = (name: string) =>
            metas.find((m) => m.name === name && m.propertyName === meta.propertyName)
              ?.constraints?.[0] as number | undefined;
          const at = `${cls.name}.${meta.propertyName}`;
          if (documented.type !== 'integer') drift.push(`${at}: type ${String(documented.type)}`);
          if (bound('max') !== undefined && documented.maximum !== bound('max'))
            drift.push(`${at}: maximum ${String(documented.maximum)}, validator ${bound('max')}`);
          if (bound('min') !== undefined && documented.minimum !== bound('min'))
            drift.push(`${at}: minimum ${String(documented.minimum)}, validator ${bound('min')}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(5);
    expect(drift).toEqual([]);
  });

  it('types every property (no `string | null` documented as an object)', () => {
    expect(mistypedProperties(doc)).toEqual([]);
  });

  it('has no ambiguous paths beyond the two explained in redocly.yaml', () => {
    expect(ambiguousPaths(doc)).toEqual(ALLOWED_AMBIGUOUS);
  });

  it('keeps the error catalogue out of the top description and links its page', () => {
    const description = doc.info.description ?? '';
    expect(description).toContain(`](${ERRORS_PAGE_PATH})`);
    expect(description).not.toContain('`route_not_found`');
    expect(description.length).toBeLessThan(4000);
    const page = errorsPageHtml();
    for (const [code, e] of Object.entries(ERROR_CATALOGUE)) {
      expect(page).toContain(`<td>${e.status}</td><td><code>${code}</code></td>`);
    }
    expect(page).not.toMatch(/(src|href)="https?:/);
  });

  it('ReDoc page and favicon load nothing from another host', () => {
    expect(redocHtml()).not.toMatch(/https?:\/\//);
    // ICO header: reserved 0, type 1 (icon).
    expect([...FAVICON_ICO.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
  });

  it('passes `redocly lint` with the repository configuration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc, null, 2));
      const root = join(__dirname, '..', '..');
      const cli = require.resolve('@redocly/cli/bin/cli.js');
      const out = await new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          [cli, 'lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'json'],
          { cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: 'off' }, maxBuffer: 64 << 20 },
          // Exit status 1 with errors: the JSON report on stdout still says which.
          (err, stdout) => (stdout ? resolve(stdout) : reject(err ?? new Error('no output'))),
        );
      });
      const report = JSON.parse(out) as {
        totals: { errors: number; warnings: number };
        problems: Array<{ ruleId: string; message: string }>;
      };
      // No errors and no warnings.
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('OpenAPI docs audits', () => {
  const fake = (paths: Json, schemas: Json = {}) =>
    ({
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths,
      components: { schemas },
    }) as unknown as OpenAPIObject;
  const problem = (status: number, code: string, extra: Json = {}) => ({
    content: {
      'application/problem+json': {
        examples: {
          [code]: {
            value: {
              type: 't',
              title: 't',
              status,
              detail: 'd',
              instance: '/',
              code,
              request_id: 'r',
              ...extra,
            },
          },
        },
      },
    },
  });

  it.each([
    ['422 example under 404', { '404': problem(422, 'validation_error', { errors: {} }) }, 3],
    ['404 code that is not *_not_found first', { '404': problem(404, 'no_previous_run') }, 1],
    ['422 without errors', { '422': problem(422, 'validation_error') }, 1],
    ['no example', { '409': { content: { 'application/problem+json': {} } } }, 1],
    ['a 409 code under 409', { '409': problem(409, 'run_closed') }, 0],
  ])('problem examples: %s', (_name, responses, count) => {
    expect(problemExampleFindings(fake({ '/x': { get: { responses } } }))).toHaveLength(count);
  });

  it.each([
    ['missing security', { description: 'Any authenticated user.' }, 1],
    ['bearer only', { description: 'x', security: [{ bearer: [] }] }, 1],
    ['both alternatives', { description: 'x', security: [{ bearer: [] }, { api_key: [] }] }, 0],
    ['public, empty list', { description: 'No authentication.', security: [] }, 0],
  ])('security: %s', (_name, op, count) => {
    expect(securityFindings(fake({ '/x': { get: op } }))).toHaveLength(count);
  });

  it('finds ambiguous paths, not merely overlapping ones', () => {
    const paths = { '/a/b/{x}': {}, '/a/{y}/c': {}, '/a/{z}': {}, '/a/b': {}, '/a/{y}/{w}': {} };
    expect(ambiguousPaths(fake(paths))).toEqual(['/a/b/{x} ~ /a/{y}/c']);
  });

  it('finds a string property documented as an object', () => {
    const schemas = {
      A: {
        properties: { s: { type: 'object', nullable: true, maxLength: 5 }, o: { type: 'object' } },
      },
    };
    expect(mistypedProperties(fake({}, schemas))).toEqual(['A.s']);
  });
});
