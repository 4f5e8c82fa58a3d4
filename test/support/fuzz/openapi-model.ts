/**
 * The operations of an OpenAPI document, reduced to what the fuzz suite needs: method, path
 * template, path and query parameters, and the request body (a JSON schema with every `$ref` and
 * `allOf` resolved, or the fields of a multipart form).
 */

export type Schema = {
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  example?: unknown;
  default?: unknown;
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
};

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  /** `GET /api/v1/projects/{id}`: the operation's name in test titles and reports. */
  key: string;
  operationId: string;
  method: HttpMethod;
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** JSON request body schema (resolved), when the operation takes one. */
  jsonBody?: Schema;
  /** Multipart request body schema (resolved), for the upload endpoints. */
  multipartBody?: Schema;
}

interface Document {
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface RawOperation {
  operationId?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document: writing and reading ones in document order, the DELETEs last. */
export function operationsOf(doc: unknown): Operation[] {
  const d = doc as Document;
  const schemas = d.components?.schemas ?? {};
  const resolve = (s: Schema | undefined): Schema | undefined => (s ? resolveSchema(s, schemas, 0) : undefined);
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(d.paths)) {
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw) continue;
      const params = (raw.parameters ?? [])
        .filter((p) => p.in === 'path' || p.in === 'query')
        .map((p) => ({
          name: p.name,
          in: p.in as 'path' | 'query',
          required: p.required === true,
          schema: resolve(p.schema) ?? { type: 'string' },
        }));
      const content = raw.requestBody?.content ?? {};
      ops.push({
        key: `${method.toUpperCase()} ${path}`,
        operationId: raw.operationId ?? `${method} ${path}`,
        method,
        path,
        // In the order of the template (the document may list them otherwise).
        pathParams: params
          .filter((p) => p.in === 'path')
          .sort((a, b) => path.indexOf(`{${a.name}}`) - path.indexOf(`{${b.name}}`)),
        queryParams: params.filter((p) => p.in === 'query'),
        jsonBody: resolve(content['application/json']?.schema),
        multipartBody: resolve(content['multipart/form-data']?.schema),
      });
    }
  }
  return [...ops.filter((o) => o.method !== 'delete'), ...ops.filter((o) => o.method === 'delete')];
}

/** Inlines `$ref`s and merges `allOf` (Swagger wraps nested DTOs as `allOf: [{$ref}]`). */
function resolveSchema(s: Schema, schemas: Record<string, Schema>, depth: number): Schema {
  if (depth > 12) return { type: 'object' };
  if (s.$ref) {
    const target = schemas[s.$ref.replace('#/components/schemas/', '')];
    const { $ref: _ref, ...rest } = s;
    return resolveSchema({ ...(target ?? { type: 'object' }), ...rest }, schemas, depth + 1);
  }
  let out: Schema = { ...s };
  if (s.allOf) {
    delete out.allOf;
    for (const part of s.allOf) {
      const r = resolveSchema(part, schemas, depth + 1);
      out = {
        ...r,
        ...out,
        properties: { ...(r.properties ?? {}), ...(out.properties ?? {}) },
        required: [...(r.required ?? []), ...(out.required ?? [])],
      };
    }
    if (Object.keys(out.properties ?? {}).length === 0) delete out.properties;
  }
  if (out.properties) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([k, v]) => [k, resolveSchema(v, schemas, depth + 1)]),
    );
  }
  if (out.items) out.items = resolveSchema(out.items, schemas, depth + 1);
  if (out.oneOf) out.oneOf = out.oneOf.map((x) => resolveSchema(x, schemas, depth + 1));
  if (out.anyOf) out.anyOf = out.anyOf.map((x) => resolveSchema(x, schemas, depth + 1));
  if (out.additionalProperties && typeof out.additionalProperties === 'object') {
    out.additionalProperties = resolveSchema(out.additionalProperties, schemas, depth + 1);
  }
  return out;
}
