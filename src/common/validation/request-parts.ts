import { Body as NestBody, Query as NestQuery } from '@nestjs/common';

/** The request parts a handler argument can be validated from. */
export type RequestPartKind = 'body' | 'query';

/** A handler argument bound with {@link Body} or {@link Query}: which part, at which position. */
export interface RequestPart {
  kind: RequestPartKind;
  index: number;
}

const REQUEST_PARTS = Symbol('tms:request-parts');

function recordPart(kind: RequestPartKind, nest: () => ParameterDecorator): ParameterDecorator {
  const bind = nest();
  return (target, key, index) => {
    bind(target, key, index);
    if (key === undefined) return; // a constructor parameter: not a route argument
    const parts = (Reflect.getOwnMetadata(REQUEST_PARTS, target, key) ?? []) as RequestPart[];
    // Appended in the order the decorators run (the last parameter first), like Nest's own record.
    Reflect.defineMetadata(REQUEST_PARTS, [...parts, { kind, index }], target, key);
  };
}

/**
 * The request body as a DTO: Nest's `@Body()`, recorded for the access guard, which validates the
 * DTO before its 404/403 checks (CONTRACT §3: 401 → 422 → 404 → 403). Controllers use this one,
 * never Nest's (test/unit/framework-conventions.spec.ts checks it).
 */
export const Body = (): ParameterDecorator => recordPart('body', () => NestBody());

/** The query string as a DTO: Nest's `@Query()`, recorded for the access guard (see {@link Body}). */
export const Query = (): ParameterDecorator => recordPart('query', () => NestQuery());

/** The body and query arguments of a controller method, as recorded by {@link Body} and {@link Query}. */
export function requestPartsOf(controller: object, method: string | symbol): readonly RequestPart[] {
  return (Reflect.getMetadata(REQUEST_PARTS, controller, method) ?? []) as RequestPart[];
}
