import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request } from 'express';
import type { EntityManager } from 'typeorm';

/** Per-request state carried through async calls: the request, and its transaction once opened. */
export interface RequestStore {
  req: Request;
  manager?: EntityManager;
  /** DTO instances validated by the guard, by argument kind, reused by the validation pipe. */
  validated: Map<string, unknown>;
}

export const requestContext = new AsyncLocalStorage<RequestStore>();

export function currentStore(): RequestStore | undefined {
  return requestContext.getStore();
}
