import type { OpenAPIObject } from '@nestjs/swagger';

type Schema = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

/**
 * Documents the answers of every GET that takes a `fields` query parameter (sparse fields): such
 * an answer's objects carry only the listed fields, so its success schema admits them. Each object
 * schema `{ $ref: X }` of the 200 (the body itself, or the `items` of a page in any of its shapes)
 * becomes `anyOf: [X, XFields]`, where `XFields` is X with the same properties and none required.
 * Without this, a client generated from the document would refuse every `fields` answer (it lacks
 * fields X requires).
 */
export function documentSparseFields(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const admitPartial = (ref: string): Schema => {
    const name = ref.slice(REF_PREFIX.length);
    const partial = `${name}Fields`;
    if (schemas[partial] === undefined) {
      const { required: _required, ...full } = schemas[name] ?? {};
      schemas[partial] = {
        ...full,
        description:
          `${name} as answered with \`fields\`: only the listed fields, in the schema's order, ` +
          'so none is required.',
      };
    }
    return { anyOf: [{ $ref: ref }, { $ref: `${REF_PREFIX}${partial}` }] };
  };
  const rewrite = (schema: Schema): Schema => {
    if (typeof schema.$ref === 'string' && schema.$ref.startsWith(REF_PREFIX)) {
      return admitPartial(schema.$ref);
    }
    if (Array.isArray(schema.oneOf))
      return { ...schema, oneOf: (schema.oneOf as Schema[]).map(rewrite) };
    const items = (schema.properties as Record<string, Schema> | undefined)?.items;
    if (items?.type === 'array' && items.items !== undefined) {
      return {
        ...schema,
        properties: {
          ...(schema.properties as Record<string, Schema>),
          items: { ...items, items: rewrite(items.items as Schema) },
        },
      };
    }
    return schema;
  };
  for (const item of Object.values(document.paths ?? {})) {
    const op = item.get;
    const ok = op?.responses?.['200'];
    if (op === undefined || ok === undefined || !('content' in ok) || ok.content === undefined)
      continue;
    const sparse = (op.parameters ?? []).some(
      (p) => 'name' in p && p.name === 'fields' && p.in === 'query',
    );
    const media = ok.content['application/json'];
    if (!sparse || media?.schema === undefined) continue;
    media.schema = rewrite(media.schema as Schema);
  }
}
