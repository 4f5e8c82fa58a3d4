import { applyDecorators, HttpCode, SetMetadata, Type } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiSecurity,
  getSchemaPath,
} from '@nestjs/swagger';
import { ERROR_CATALOGUE, ErrorCode } from '../errors/error-codes';
import { IF_MATCH_DESCRIPTION } from '../openapi/conditional-docs';
import { problemContent } from '../openapi/problem-examples';
import { ProblemDto } from '../openapi/problem.dto';
import { API_KEY_SCHEME, BEARER_SCHEME } from '../openapi/security-schemes';
import { ProjectSource } from './project-access';
import { ProjectRole } from './roles';

export const ACCESS_KEY = 'tms:access';

/** Who may call an endpoint. Every route has exactly one (set by @Endpoint). */
export type AccessRule = (
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'admin' }
  | { kind: 'project'; minRole: ProjectRole; project: ProjectSource }
) & {
  /** Path parameters checked as whole numbers with the request shape (EndpointOptions.pathIntegers). */
  pathIntegers?: readonly string[];
};

/** Role metadata alone (the RolesGuard enforces it). Prefer @Endpoint, which also documents it. */
export const MinRole = (minRole: ProjectRole, project: ProjectSource) =>
  SetMetadata(ACCESS_KEY, { kind: 'project', minRole, project } satisfies AccessRule);

/** An OpenAPI response header. */
export interface HeaderDoc {
  description: string;
  schema: { type: 'string' | 'integer'; example?: string | number };
}

/** Headers of problem responses, by the codes that send them (the problem filter sets them). */
const PROBLEM_HEADERS: Array<{
  status: number;
  codes: ErrorCode[] | 'all';
  name: string;
  doc: HeaderDoc;
}> = [
  {
    status: 401,
    codes: 'all',
    name: 'WWW-Authenticate',
    doc: {
      description: 'The authentication scheme: `Bearer`',
      schema: { type: 'string', example: 'Bearer' },
    },
  },
  {
    status: 429,
    codes: ['too_many_attempts'],
    name: 'Retry-After',
    doc: {
      description: 'Seconds until the lockout ends',
      schema: { type: 'integer', example: 60 },
    },
  },
  {
    status: 503,
    codes: ['database_unavailable'],
    name: 'Retry-After',
    doc: {
      description: 'Seconds to wait before retrying',
      schema: { type: 'integer', example: 5 },
    },
  },
];

export interface EndpointOptions {
  summary: string;
  description?: string;
  /** Minimum project role, with where the project comes from. */
  minRole?: ProjectRole;
  project?: ProjectSource;
  /** Instead of a project role: 'public', 'authenticated' or 'admin'. */
  access?: 'public' | 'authenticated' | 'admin';
  /**
   * The guard only authenticates; the service resolves the project (for example from an id in the
   * body, or fused with the read in one query) and enforces this minimum role itself.
   */
  serviceChecksRole?: ProjectRole;
  /** Success status (default 200). */
  status?: number;
  /**
   * Success body: a DTO class, `[Dto]` for a bare array, a raw schema, or a raw schema per media
   * type (`{ content: { 'text/csv': { schema } } }`, a download in several formats). No body for 204.
   */
  response?:
    | Type<unknown>
    | [Type<unknown>]
    | { schema: Record<string, unknown> }
    | { content: Record<string, { schema: Record<string, unknown> }> };
  responseDescription?: string;
  /** Domain problems this endpoint can answer beyond the standard 401/403/404/422. */
  problems?: ErrorCode[];
  /** Codes this endpoint answers as 404 Not found instead of their catalogue status (`ALSO_NOT_FOUND`). */
  notFoundAs?: ErrorCode[];
  /** Headers of the success response worth a client's attention (`ETag`, `Content-Disposition`, …). */
  responseHeaders?: Record<string, HeaderDoc>;
  /**
   * Path parameters that must be whole numbers from 1 to 2,147,483,647 (e.g. `revision_number`).
   * The guard checks them with the request shape (422 `path.<name>`), before the 404/403 checks.
   */
  pathIntegers?: string[];
  /**
   * The write honours `If-Match` (the handler calls `Preconditions.ifMatch` first): documents the
   * header and 412 `precondition_failed`.
   */
  ifMatch?: boolean;
}

/**
 * One decorator per route: access rule (enforced by the global RolesGuard), success status,
 * OpenAPI operation, bearer auth and every documented problem response.
 */
export function Endpoint(o: EndpointOptions): MethodDecorator {
  const rule: AccessRule = o.serviceChecksRole
    ? { kind: 'authenticated' }
    : o.access
      ? { kind: o.access }
      : { kind: 'project', minRole: o.minRole ?? 'viewer', project: o.project ?? { in: 'query' } };
  const status = o.status ?? 200;
  const who = o.serviceChecksRole
    ? `Minimum project role: **${o.serviceChecksRole}** (administrators act as lead); non-members get 404.`
    : rule.kind === 'public'
      ? 'No authentication.'
      : rule.kind === 'authenticated'
        ? 'Any authenticated user.'
        : rule.kind === 'admin'
          ? 'Administrators only.'
          : `Minimum project role: **${rule.minRole}** (administrators act as lead).`;
  const headers = o.responseHeaders;
  const decorators: Array<MethodDecorator | ClassDecorator> = [
    SetMetadata(
      ACCESS_KEY,
      o.pathIntegers?.length ? { ...rule, pathIntegers: o.pathIntegers } : rule,
    ),
    HttpCode(status),
    ApiExtraModels(ProblemDto),
    ApiOperation({
      summary: o.summary,
      description: [o.description, who].filter(Boolean).join('\n\n'),
      // A public operation says so (an empty list), rather than leaving `security` out.
      ...(rule.kind === 'public' ? { security: [] } : {}),
    }),
  ];
  // Two alternatives: `Authorization: Bearer …` (token or API key) or `X-API-Key: tms_…`.
  if (rule.kind !== 'public')
    decorators.push(ApiBearerAuth(BEARER_SCHEME), ApiSecurity(API_KEY_SCHEME));
  if (rule.kind === 'project' && 'resource' in rule.project) {
    // The path parameter naming the resource, documented even when the handler reads the resolved
    // access instead of @Param (Swagger merges it with a @Param of the same name).
    const name = rule.project.param ?? 'id';
    decorators.push(
      ApiParam({ name, description: `${rule.project.resource.label} id`, type: String }),
    );
  }

  if (status === 204) {
    decorators.push(
      ApiResponse({ status, description: o.responseDescription ?? 'Done; no body.' }),
    );
  } else if (o.response && ('schema' in o.response || 'content' in o.response)) {
    // A raw schema, or one per media type.
    decorators.push(
      ApiResponse({
        status,
        description: o.responseDescription ?? 'Success',
        ...o.response,
        headers,
      }),
    );
  } else if (Array.isArray(o.response)) {
    decorators.push(
      ApiResponse({
        status,
        description: o.responseDescription ?? 'Success',
        type: o.response[0],
        isArray: true,
        headers,
      }),
    );
  } else if (o.response) {
    decorators.push(
      ApiResponse({
        status,
        description: o.responseDescription ?? 'Success',
        type: o.response,
        headers,
      }),
    );
  } else {
    decorators.push(
      ApiResponse({ status, description: o.responseDescription ?? 'Success', headers }),
    );
  }

  if (o.ifMatch) {
    decorators.push(
      ApiHeader({ name: 'If-Match', required: false, description: IF_MATCH_DESCRIPTION }),
    );
  }

  const codes = new Set<ErrorCode>(o.problems ?? []);
  if (o.ifMatch) codes.add('precondition_failed');
  codes.add('validation_error');
  // Every operation reads or writes the database.
  codes.add('database_unavailable');
  if (rule.kind !== 'public') {
    codes.add('unauthorized');
    codes.add('invalid_token');
    codes.add('token_expired');
    codes.add('token_revoked');
    codes.add('invalid_api_key');
    codes.add('user_disabled');
  }
  if (rule.kind === 'admin') codes.add('admin_required');
  if (rule.kind === 'project') {
    codes.add('insufficient_project_role');
    const src = rule.project;
    codes.add('resource' in src ? src.resource.notFound : 'project_not_found');
  }
  const as404 = new Set<ErrorCode>(o.notFoundAs ?? []);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const s = ERROR_CATALOGUE[c].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  for (const c of as404) byStatus.set(404, [...(byStatus.get(404) ?? []), c]);
  for (const [s, list] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    const sent = PROBLEM_HEADERS.filter(
      (h) => h.status === s && (h.codes === 'all' || h.codes.some((c) => list.includes(c))),
    );
    decorators.push(
      ApiResponse({
        status: s,
        description: `Problem (application/problem+json). Codes: ${list.map((c) => '`' + c + '`').join(', ')}`,
        // One example per code, each with its own status and code.
        content: problemContent(getSchemaPath(ProblemDto), list, s === 404 ? as404 : undefined),
        ...(sent.length > 0
          ? { headers: Object.fromEntries(sent.map((h) => [h.name, h.doc])) }
          : {}),
      }),
    );
  }
  return applyDecorators(...decorators);
}
