import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AuthenticationService } from '../auth/authentication.service';
import { AppException } from '../errors/app-exception';
import { currentStore } from '../persistence/request-context';
import { isUuid } from '../persistence/ids';
import { isPathInteger, MAX_PATH_INTEGER } from '../validation/path-integer';
import { requestPartsOf } from '../validation/request-parts';
import { isDtoClass, MAX_ERROR_FIELDS, validateInput } from '../validation/validate';
import { IDEMPOTENCY_KEY_FIELD, idempotencyKeyProblem } from '../idempotency/idempotency-key';
import { isNotIdempotent } from '../idempotency/not-idempotent.decorator';
import { AccessService } from './access.service';
import { ACCESS_KEY, AccessRule } from './endpoint.decorator';
import { hasRole } from './roles';

/** Methods whose body an operation without a body DTO still reads as a request (CONTRACT §2). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Errors of a JSON body sent to an operation that takes none (`POST /webhooks/{id}/ping`…): each
 * field is unknown (CONTRACT §2: unknown fields are a 422 on every request body); no body, `{}` or
 * an empty array pass. The shape middleware has already bounded the body.
 */
export function unexpectedBodyFields(body: unknown): Record<string, string[]> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object') return { body: ['This operation takes no request body'] };
  if (Array.isArray(body))
    return body.length === 0 ? {} : { body: ['This operation takes no request body'] };
  const errors = Object.create(null) as Record<string, string[]>;
  for (const key of Object.keys(body).slice(0, MAX_ERROR_FIELDS)) errors[key] = ['Unknown field'];
  return errors;
}

/**
 * The global guard. In the CONTRACT §3 order: authentication (401) → request shape (422, validated
 * here once and reused by the pipe) → the addressed resource and its project (404) → role (403).
 * A route without an access rule is refused: every endpoint must declare one with @Endpoint.
 */
@Injectable()
export class RolesGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthenticationService,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!rule) throw new AppException('forbidden', 'This route declares no access rule');

    if (rule.kind === 'project' && req.deferredError === undefined) {
      if (await this.projectRequestWithToken(context, req, rule)) return true;
    }

    if (rule.kind !== 'public') req.user = await this.auth.authenticate(req);
    // A body problem found before routing (415, 413, malformed JSON) surfaces after authentication.
    if (req.deferredError !== undefined) throw req.deferredError;

    const validated = this.validateArguments(
      context,
      req,
      rule.pathIntegers ?? [],
      rule.kind !== 'public',
    );

    if (rule.kind === 'admin' && !req.user?.isAdmin) {
      throw new AppException('admin_required', 'This operation requires an administrator');
    }
    if (rule.kind !== 'project' || !req.user) return true;

    const src = rule.project;
    let access;
    if ('resource' in src) {
      const id = req.params[src.param ?? 'id'];
      access = await this.access.forResource(req.user, src.resource, id);
    } else {
      const key = src.key ?? 'project_id';
      const part = (src.in === 'query' ? validated.get('query') : validated.get('body')) as
        | Record<string, unknown>
        | undefined;
      const raw = part
        ? part[key]
        : src.in === 'query'
          ? req.query[key]
          : (req.body as Record<string, unknown> | undefined)?.[key];
      access = await this.access.forProject(req.user, raw);
    }
    if (!hasRole(access.role, rule.minRole)) {
      throw new AppException(
        'insufficient_project_role',
        `This operation requires the ${rule.minRole} role or higher in this project; you are ${access.role}`,
      );
    }
    req.access = access;
    return true;
  }

  /**
   * The common case of a project route, with one statement instead of two: a bearer access token
   * that verifies, a request shape that validates and a uuid for the project or resource. The user
   * row (authentication) and the membership (access) are read together, then judged in the CONTRACT
   * §3 order (401, 404, 403; a 422 cannot occur here). Returns false, having read nothing from the
   * database, whenever any of that does not hold: the general path then answers in the same order.
   */
  private async projectRequestWithToken(
    context: ExecutionContext,
    req: Request,
    rule: Extract<AccessRule, { kind: 'project' }>,
  ): Promise<boolean> {
    const claims = this.auth.verifiedTokenClaims(req);
    if (!claims) return false;
    let validated: Map<string, unknown>;
    try {
      validated = this.validateArguments(context, req, rule.pathIntegers ?? [], true);
    } catch {
      return false;
    }
    const src = rule.project;
    let id: unknown;
    if ('resource' in src) id = req.params[src.param ?? 'id'];
    else {
      const key = src.key ?? 'project_id';
      const part = validated.get(src.in) as Record<string, unknown> | undefined;
      id = part
        ? part[key]
        : src.in === 'query'
          ? req.query[key]
          : (req.body as Record<string, unknown> | undefined)?.[key];
    }
    if (!isUuid(id)) return false;
    const ref = 'resource' in src ? src.resource : undefined;
    const row = await this.access.userAndMembership(claims.sub, id, ref);
    const user = this.auth.userOfToken(row.user, claims);
    req.user = user;
    const access = this.access.decide(
      user,
      row.membership,
      ref?.notFound ?? 'project_not_found',
      ref?.label ?? 'Project',
    );
    if (!hasRole(access.role, rule.minRole)) {
      throw new AppException(
        'insufficient_project_role',
        `This operation requires the ${rule.minRole} role or higher in this project; you are ${access.role}`,
      );
    }
    req.access = access;
    return true;
  }

  /**
   * Validates the DTO arguments bound with our @Body() and @Query() (src/common/validation/request-parts.ts)
   * now, caching them for the validation pipe, and the whole-number path parameters the route
   * declares; all their errors are reported together.
   */
  private validateArguments(
    context: ExecutionContext,
    req: Request,
    pathIntegers: readonly string[],
    authenticated: boolean,
  ): Map<string, unknown> {
    const store = currentStore();
    const validated = store?.validated ?? new Map<string, unknown>();
    const proto = context.getClass().prototype as object;
    const method = context.getHandler().name;
    const parts = requestPartsOf(proto, method);
    const types: unknown[] =
      parts.length > 0 ? (Reflect.getMetadata('design:paramtypes', proto, method) ?? []) : [];
    const isMultipart = (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/');
    // Errors of the query and the body are reported together.
    // No prototype: a field path such as `toString` must not resolve to an inherited member.
    const errors = Object.create(null) as Record<string, string[]>;
    // A part with more bad fields than a 422 lists says so in its detail (validationProblem).
    let detail: string | undefined;
    for (const { kind, index } of parts) {
      const type = types[index];
      if (!isDtoClass(type)) continue;
      if (kind === 'body' && isMultipart) continue; // form fields exist only after multer runs
      try {
        validated.set(kind, validateInput(type, kind === 'body' ? req.body : req.query, kind));
      } catch (err) {
        if (err instanceof AppException && err.code === 'validation_error' && err.errors) {
          for (const [k, v] of Object.entries(err.errors)) (errors[k] ??= []).push(...v);
          if (Object.keys(err.errors).length >= MAX_ERROR_FIELDS) detail = err.message;
        } else throw err;
      }
    }
    if (!isMultipart && !parts.some((p) => p.kind === 'body') && BODY_METHODS.has(req.method)) {
      for (const [path, messages] of Object.entries(unexpectedBodyFields(req.body))) {
        (errors[path] ??= []).push(...messages);
      }
    }
    // The Idempotency-Key header is part of the request's shape: a bad key is a 422 before the
    // 404/403 checks (CONTRACT §3), not after them in the idempotency layer.
    const key = req.headers['idempotency-key'];
    if (
      authenticated &&
      req.method === 'POST' &&
      key !== undefined &&
      !isNotIdempotent(context.getHandler())
    ) {
      const problem = idempotencyKeyProblem(String(key));
      if (problem !== null) (errors[IDEMPOTENCY_KEY_FIELD] ??= []).push(problem);
    }
    for (const name of pathIntegers) {
      if (!isPathInteger(req.params[name])) {
        (errors[`path.${name}`] ??= []).push(
          `${name} must be a whole number from 1 to ${MAX_PATH_INTEGER}`,
        );
      }
    }
    if (Object.keys(errors).length > 0) throw AppException.validation(errors, detail);
    return validated;
  }
}
