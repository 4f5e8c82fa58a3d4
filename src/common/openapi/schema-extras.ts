import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * Schema-level keywords a DTO class cannot declare through @nestjs/swagger's decorators
 * (`@ApiSchema` takes a name and a description only): `maxProperties`, `additionalProperties`. A
 * feature registers them for its schema by name at module load; the document builder applies them
 * ({@link documentSchemaExtras}).
 */
const extras = new Map<string, Record<string, unknown>>();

export function registerSchemaExtras(schema: string, keywords: Record<string, unknown>): void {
  extras.set(schema, { ...extras.get(schema), ...keywords });
}

/** Adds the registered keywords to the document's component schemas of those names. */
export function documentSchemaExtras(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  for (const [name, keywords] of extras) {
    const schema = schemas[name];
    if (schema !== undefined && !('$ref' in schema)) Object.assign(schema, keywords);
  }
}
