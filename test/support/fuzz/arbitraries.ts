import fc from 'fast-check';
import { FIXTURE_KINDS, FixtureKind, FixtureRef, fieldKind, pathParamKind } from './fixtures';
import type { Operation, Parameter, Schema } from './openapi-model';
import {
  EXTRA_QUERY_NAMES,
  JUNK_QUERY,
  JUNK_SEGMENTS,
  JUNK_STRINGS,
  junkValue,
  plainString,
  Raw,
  UPLOAD_FILES,
} from './values';
import { describeRequest } from './format';

/**
 * Arbitraries for whole requests to one operation, built from the operation's OpenAPI description
 * alone (so a new endpoint is fuzzed without any change here): path parameters, query string,
 * credentials and a body (JSON built from the request schema then mutated, or multipart).
 */

export type Auth = 'lead' | 'admin' | 'none' | 'junk';

export type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType: string; bytes: string | Buffer }
  | { kind: 'multipart'; files: FilePart[]; fields: Array<[string, string]> };

export interface FilePart {
  field: string;
  filename: string;
  label: string;
  content: string | Buffer;
}

export type PathValue = FixtureRef | string | Raw;
export type QueryValue = FixtureRef | string | Raw;

export interface FuzzRequest {
  op: Operation;
  auth: Auth;
  /** The header sent for `junk` credentials. */
  credential: [string, string] | null;
  path: PathValue[];
  query: Array<[string | Raw, QueryValue]>;
  body: Body;
  /** Extra request headers (the transport properties: Content-Encoding…). */
  headers?: Array<[string, string]>;
}

const MISSING = Symbol('missing');

const ALL_REFS = FIXTURE_KINDS.map((k) => new FixtureRef(k));
const anyRef = fc.constantFrom(...ALL_REFS);
const refOf = (kind: FixtureKind) => fc.constant(new FixtureRef(kind));

/** True for schemas Swagger types as `object` that are really strings (`maxLength` on an object). */
function isStringLike(s: Schema): boolean {
  return s.type === 'string' || (s.type === 'object' && !s.properties && (s.maxLength !== undefined || s.format !== undefined));
}

/** A value the operation plausibly accepts for this schema (ids are real fixtures most of the time). */
export function validValue(schema: Schema, name: string, depth = 0): fc.Arbitrary<unknown> {
  const nullable = schema.nullable === true;
  const base = validNonNull(schema, name, depth);
  return nullable ? fc.oneof({ weight: 6, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) }) : base;
}

function validNonNull(schema: Schema, name: string, depth: number): fc.Arbitrary<unknown> {
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  if (schema.oneOf || schema.anyOf) {
    const alts = (schema.oneOf ?? schema.anyOf ?? []).map((s) => validValue(s, name, depth));
    if (alts.length > 0) return fc.oneof(...alts);
  }
  const kind = fieldKind(name);
  if (schema.type === 'array') {
    const items = schema.items ?? { type: 'string' };
    const max = Math.min(3, schema.maxItems ?? 3);
    return fc.array(validValue(items, name, depth + 1), { minLength: Math.min(schema.minItems ?? 0, max), maxLength: max });
  }
  if (kind && (isStringLike(schema) || !schema.type)) {
    return fc.oneof({ weight: 8, arbitrary: refOf(kind) }, { weight: 1, arbitrary: anyRef }, { weight: 1, arbitrary: fc.uuid() });
  }
  if (schema.format === 'uuid') return fc.oneof(anyRef, fc.uuid());
  if (schema.format === 'date-time' || /_(at|from|to)$/.test(name)) {
    return fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (schema.format === 'date' || /_date$/.test(name)) {
    return fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  }
  if (name.includes('email')) return fc.oneof(fc.constant('a@x.io'), fc.emailAddress());
  if (isStringLike(schema)) {
    const max = Math.max(1, Math.min(schema.maxLength ?? 24, 24));
    const text = plainString.map((s) => s.slice(0, max));
    return typeof schema.example === 'string' ? fc.oneof(fc.constant(schema.example), text) : text;
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    const min = schema.minimum ?? 0;
    const max = Math.max(min, Math.min(schema.maximum ?? min + 1000, min + 100_000));
    return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  }
  if (schema.type === 'boolean') return fc.boolean();
  if (schema.properties && depth < 4) return objectValue(schema, depth + 1, false);
  if (schema.example !== undefined) return fc.constant(schema.example);
  // Free-form object (meta, extra, values…).
  return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
}

/** Values just outside what the schema allows: too long, out of range, not in the enum. */
function edgeValue(schema: Schema): fc.Arbitrary<unknown> {
  const edges: unknown[] = [];
  if (schema.maxLength !== undefined) edges.push('y'.repeat(schema.maxLength + 1), 'y'.repeat(schema.maxLength));
  if (schema.minimum !== undefined) edges.push(schema.minimum - 1, schema.minimum - 0.5);
  if (schema.maximum !== undefined) edges.push(schema.maximum + 1);
  if (schema.enum) edges.push(`${String(schema.enum[0])}x`, String(schema.enum[0]).toUpperCase());
  if (schema.maxItems !== undefined) edges.push(Array(schema.maxItems + 1).fill('a'));
  if (schema.type === 'integer') edges.push(1.5, '1', 2147483648, -2147483649);
  return edges.length > 0 ? fc.constantFrom(...edges) : junkValue;
}

/** A field's value in a mutated body: mostly valid, sometimes junk, an edge or absent. */
function mutatedField(schema: Schema, name: string, depth: number, required: boolean): fc.Arbitrary<unknown> {
  const nested =
    schema.properties && depth < 4
      ? objectValue(schema, depth + 1, true)
      : schema.type === 'array' && schema.items?.properties && depth < 4
        ? fc.array(objectValue(schema.items, depth + 1, true), { maxLength: 3 })
        : validValue(schema, name, depth);
  const stringy = isStringLike(schema) && !schema.enum;
  return fc.oneof(
    { weight: required ? 12 : 4, arbitrary: nested },
    { weight: 2, arbitrary: junkValue },
    { weight: stringy ? 2 : 0, arbitrary: fc.constantFrom(...JUNK_STRINGS) },
    { weight: stringy ? 3 : 0, arbitrary: withNastyChar(validValue({ ...schema, nullable: false }, name, depth)) },
    { weight: 1, arbitrary: edgeValue(schema) },
    { weight: required ? 1 : 5, arbitrary: fc.constant(MISSING) },
  );
}

/** Characters that break naive string handling: lone surrogates, NUL, bidi override, BOM, emoji. */
const NASTY_CHARS = ['\ud800', '\udfff', '\u0000', '\u202e', '\ufeff', '🎉', '%', '\\'];

/** A valid string with a nasty character put somewhere in it (`a@x.io` → `a\ud800@x.io`). */
function withNastyChar(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.constantFrom(...NASTY_CHARS), fc.nat()).map(([v, ch, at]) => {
    if (typeof v !== 'string') return v;
    const i = v.length === 0 ? 0 : at % (v.length + 1);
    return v.slice(0, i) + ch + v.slice(i);
  });
}

const EXTRA_KEYS = ['extra', 'id', 'created_at', '$ne', '__proto__', 'constructor', '', 'a.b', 'x'.repeat(300)];

/** An object for a schema with properties; `mutate` puts junk, edges, gaps and extra keys in. */
function objectValue(schema: Schema, depth: number, mutate: boolean): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    fields[name] = mutate
      ? mutatedField(prop, name, depth, required.has(name))
      : required.has(name)
        ? validValue(prop, name, depth)
        : fc.oneof(validValue(prop, name, depth), fc.constant(MISSING));
  }
  const extras = mutate
    ? fc.oneof(
        { weight: 4, arbitrary: fc.constant([] as Array<[string, unknown]>) },
        { weight: 1, arbitrary: fc.array(fc.tuple(fc.constantFrom(...EXTRA_KEYS), junkValue), { maxLength: 2 }) },
      )
    : fc.constant([] as Array<[string, unknown]>);
  return fc.tuple(fc.record(fields), extras).map(([rec, extra]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rec)) if (v !== MISSING) out[k] = v;
    for (const [k, v] of extra) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

/** Raw bodies: malformed JSON, other media types, bytes that are not UTF-8. */
const RAW_BODIES: Array<[string, string | Buffer]> = [
  ['application/json', '{'],
  ['application/json', '{"a":'],
  ['application/json', '[1,]'],
  ['application/json', '{"a":1}{"b":2}'],
  ['application/json', 'nul'],
  ['application/json', '"\\ud800"'],
  ['application/json', '{"a":"\\u0000"}'],
  ['application/json', '{"__proto__":{"polluted":true}}'],
  ['application/json', '   '],
  ['application/json', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ['application/json; charset=latin1', '{"a":"\u00e9"}'],
  ['application/json; charset=utf-16', '{}'],
  ['application/merge-patch+json', '{}'],
  ['text/plain', 'hello'],
  ['application/x-www-form-urlencoded', 'a=1&b=2'],
  ['application/xml', '<a/>'],
  ['multipart/form-data; boundary=x', '--x\r\n\r\n--x--'],
  ['', '{}'],
];
const rawBody: fc.Arbitrary<Body> = fc
  .constantFrom(...RAW_BODIES)
  .map(([contentType, bytes]) => ({ kind: 'raw' as const, contentType, bytes }));

function jsonBody(schema: Schema): fc.Arbitrary<Body> {
  const object = schema.properties !== undefined;
  const json = (a: fc.Arbitrary<unknown>) => a.map((value) => ({ kind: 'json' as const, value }));
  return fc.oneof(
    { weight: 6, arbitrary: json(object ? objectValue(schema, 0, false) : validValue(schema, 'body')) },
    { weight: 10, arbitrary: json(object ? objectValue(schema, 0, true) : mutatedField(schema, 'body', 0, true)) },
    { weight: 2, arbitrary: json(junkValue) },
    { weight: 1, arbitrary: rawBody },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
  );
}

const uploadFile: fc.Arbitrary<[string, string | Buffer]> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...UPLOAD_FILES) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((b): [string, Buffer] => ['random bytes', Buffer.from(b)]) },
);
const FILENAMES = ['report.xml', 'results.json', 'a', '../../etc/passwd', '日本語.xml', '\ud800.xml', 'x'.repeat(300) + '.xml'];
const filePart = (field: fc.Arbitrary<string>): fc.Arbitrary<FilePart> =>
  fc.record({ field, filename: fc.constantFrom(...FILENAMES), file: uploadFile }).map(({ field: f, filename, file }) => ({
    field: f,
    filename,
    label: file[0],
    content: file[1],
  }));

function multipartBody(schema: Schema): fc.Arbitrary<Body> {
  const fileFields = Object.entries(schema.properties ?? {})
    .filter(([, s]) => s.format === 'binary')
    .map(([k]) => k);
  const otherFields = Object.entries(schema.properties ?? {}).filter(([, s]) => s.format !== 'binary');
  const fileField = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...(fileFields.length > 0 ? fileFields : ['file'])) },
    { weight: 1, arbitrary: fc.constantFrom('report', 'files', '') },
  );
  const files = fc.oneof(
    { weight: 8, arbitrary: fc.array(filePart(fileField), { minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constant([] as FilePart[]) },
    { weight: 1, arbitrary: fc.array(filePart(fileField), { minLength: 2, maxLength: 2 }) },
  );
  const fieldValue = (s: Schema, name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(MISSING) },
      { weight: 3, arbitrary: validValue(s, name).map(String) },
      { weight: 2, arbitrary: fc.constantFrom(...JUNK_STRINGS.filter((x) => x.length < 20_000)) },
    );
  const fields = fc
    .tuple(...otherFields.map(([name, s]) => fieldValue(s, name).map((v) => [name, v] as const)))
    .map((pairs) => pairs.filter(([, v]) => v !== MISSING) as Array<[string, string]>);
  // A well-formed upload: one report in the documented file field, valid or absent form fields.
  const validUpload = fc
    .record({
      file: fc.constantFrom(...UPLOAD_FILES.filter(([label]) => label === 'junit' || label === 'junit with failure' || label === 'json')),
      fields: fc
        .tuple(...otherFields.map(([name, sch]) => fc.option(validValue(sch, name).map((v) => [name, String(v)] as [string, string]), { nil: undefined })))
        .map((pairs) => pairs.filter((x): x is [string, string] => x !== undefined)),
    })
    .map(({ file, fields: x }): Body => ({
      kind: 'multipart',
      files: [{ field: fileFields[0] ?? 'file', filename: file[0] === 'json' ? 'results.json' : 'report.xml', label: file[0], content: file[1] }],
      fields: x,
    }));
  return fc.oneof(
    { weight: 3, arbitrary: validUpload },
    { weight: 7, arbitrary: fc.record({ files, fields }).map(({ files: f, fields: x }) => ({ kind: 'multipart' as const, files: f, fields: x })) },
    { weight: 1, arbitrary: fc.oneof(rawBody, fc.constant<Body>({ kind: 'none' })) },
  );
}

/** A body for an operation that takes none (the service must ignore it). */
const strayBody: fc.Arbitrary<Body> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Body>({ kind: 'none' }) },
  { weight: 1, arbitrary: junkValue.map((value): Body => ({ kind: 'json', value })) },
  { weight: 1, arbitrary: rawBody },
);

function pathValue(op: Operation, p: Parameter): fc.Arbitrary<PathValue> {
  const numeric = p.schema.type === 'integer' || p.name.endsWith('_number');
  const kind = pathParamKind(op.path, p.name);
  const real: fc.Arbitrary<PathValue> = numeric
    ? fc.constantFrom('1', '2', '01')
    : kind
      ? fc.oneof({ weight: 9, arbitrary: refOf(kind) }, { weight: 1, arbitrary: refOf(kind === 'project' ? 'otherProject' : 'project') })
      : anyRef;
  return fc.oneof(
    { weight: 7, arbitrary: real },
    { weight: 1, arbitrary: anyRef },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constantFrom(...JUNK_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }) },
  );
}

const queryItemSchema = (p: Parameter): Schema =>
  p.schema.type === 'array' ? (p.schema.items ?? { type: 'string' }) : p.schema;

function validQueryValue(p: Parameter): fc.Arbitrary<QueryValue> {
  return validValue({ ...queryItemSchema(p), nullable: false }, p.name).map((v): QueryValue =>
    v instanceof FixtureRef ? v : String(v),
  );
}

/** Junk for one query value: only strings go in a query (a list parameter is repeated instead). */
function junkQueryValue(p: Parameter): fc.Arbitrary<QueryValue> {
  const schema = queryItemSchema(p);
  const edges = [
    ...(schema.maxLength !== undefined ? ['y'.repeat(schema.maxLength + 1)] : []),
    ...(schema.minimum !== undefined ? [String(schema.minimum - 1)] : []),
    ...(schema.maximum !== undefined ? [String(schema.maximum + 1)] : []),
    ...(schema.enum ? [`${String(schema.enum[0])}x`, String(schema.enum[0]).toUpperCase()] : []),
  ];
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...JUNK_QUERY) },
    { weight: edges.length > 0 ? 1 : 0, arbitrary: fc.constantFrom(...(edges.length > 0 ? edges : [''])) },
    { weight: 1, arbitrary: withNastyChar(validQueryValue(p)) as fc.Arbitrary<QueryValue> },
  );
}

const queryValueOf = (p: Parameter): fc.Arbitrary<QueryValue> => fc.oneof(validQueryValue(p), junkQueryValue(p));

/**
 * The query string: either every documented parameter absent or valid (so requests reach the
 * service), or each one absent, valid, junk, at an edge or repeated, sometimes with an undocumented
 * parameter.
 */
function queryPairs(op: Operation): fc.Arbitrary<Array<[string | Raw, QueryValue]>> {
  type Pairs = Array<[string | Raw, QueryValue]>;
  const none = fc.constant([] as Pairs);
  const one = (p: Parameter, v: fc.Arbitrary<QueryValue>) => v.map((x) => [[p.name, x]] as Pairs);
  const valid = fc
    .tuple(...op.queryParams.map((p) => fc.oneof(none, one(p, validQueryValue(p)))))
    .map((lists) => lists.flat());
  const mutated = fc
    .tuple(
      ...op.queryParams.map((p) =>
        fc.oneof(
          { weight: 3, arbitrary: none },
          { weight: 3, arbitrary: one(p, validQueryValue(p)) },
          { weight: 3, arbitrary: one(p, junkQueryValue(p)) },
          {
            weight: 1,
            arbitrary: fc
              .tuple(queryValueOf(p), queryValueOf(p))
              .map(([a, b]) => [[p.name, a], [p.name, b]] as Pairs),
          },
          // A list parameter repeated beyond its documented maxItems.
          {
            weight: p.schema.maxItems !== undefined ? 1 : 0,
            arbitrary: validQueryValue(p).map((v) => Array.from({ length: (p.schema.maxItems ?? 0) + 1 }, () => [p.name, v]) as Pairs),
          },
        ),
      ),
    )
    .map((lists) => lists.flat());
  const extra = fc.oneof(
    { weight: 5, arbitrary: none },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.oneof(fc.constantFrom(...EXTRA_QUERY_NAMES), fc.constantFrom(new Raw('%ZZ'), new Raw('%ED%A0%80'))), fc.constantFrom(...JUNK_QUERY))
        .map(([k, v]) => [[k, v]] as Pairs),
    },
  );
  return fc.oneof(
    { weight: 2, arbitrary: valid },
    { weight: 3, arbitrary: fc.tuple(mutated, extra).map(([a, b]) => [...a, ...b]) },
  );
}

const JUNK_CREDENTIALS: Array<[string, string]> = [
  ['Authorization', 'Bearer'],
  ['Authorization', 'Bearer x'],
  ['Authorization', 'Bearer a.b.c'],
  ['Authorization', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
  ['Authorization', 'Basic YWRtaW46YWRtaW4='],
  ['Authorization', `Bearer tms_${'x'.repeat(40)}`],
  ['Authorization', `Bearer ${'x'.repeat(8000)}`],
  ['X-API-Key', ''],
  ['X-API-Key', 'tms_'],
  ['X-API-Key', `tms_${'a'.repeat(60)}`],
];

const auth: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 14, arbitrary: fc.constant<Auth>('lead') },
  { weight: 3, arbitrary: fc.constant<Auth>('admin') },
  { weight: 2, arbitrary: fc.constant<Auth>('none') },
  { weight: 1, arbitrary: fc.constant<Auth>('junk') },
);

/** Every request fast-check may send to `op`. */
export function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
  const body = op.multipartBody ? multipartBody(op.multipartBody) : op.jsonBody ? jsonBody(op.jsonBody) : strayBody;
  return fc
    .record({
      auth,
      credential: fc.constantFrom(...JUNK_CREDENTIALS),
      path: fc.tuple(...op.pathParams.map((p) => pathValue(op, p))),
      query: queryPairs(op),
      body,
    })
    .map(({ auth: a, credential, path, query, body: b }) =>
      described({ op, auth: a, credential: a === 'junk' ? credential : null, path, query, body: b }),
    );
}

/** `req`, printed by fast-check as {@link describeRequest} shows it. */
export function described(req: FuzzRequest): FuzzRequest {
  return Object.defineProperty(req, fc.toStringMethod, { value: () => describeRequest(req), enumerable: false });
}
