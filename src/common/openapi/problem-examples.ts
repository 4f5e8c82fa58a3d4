import { ERROR_CATALOGUE, ErrorCode } from '../errors/error-codes';

/** Base of the `type` URIs in the documented examples (the default of ERROR_BASE_URL). */
const EXAMPLE_ERROR_BASE = 'https://tms.local/errors';
const EXAMPLE_REQUEST_ID = '0190f3b2-7c1d-7abc-8def-0123456789ab';

/** Shown first among the codes of one status, when the response lists it. */
const PREFERRED: readonly ErrorCode[] = [
  'unauthorized',
  'insufficient_project_role',
  'validation_error',
  'database_unavailable',
];

const DETAILS: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'Authentication required',
  insufficient_project_role: 'This action needs the lead role in the project',
  validation_error: 'Request contains invalid fields',
  database_unavailable: 'The database is not reachable; retry later',
};

/** One example problem body for `code`: its own status, title and code. */
export function problemExample(
  code: ErrorCode,
  instance = '/api/v1/…',
  as404 = false,
): Record<string, unknown> {
  const { status, title } = as404 ? { status: 404, title: 'Not found' } : ERROR_CATALOGUE[code];
  return {
    type: `${EXAMPLE_ERROR_BASE}/${code}`,
    title,
    status,
    detail: DETAILS[code] ?? title,
    instance,
    code,
    request_id: EXAMPLE_REQUEST_ID,
    ...(code === 'validation_error' ? { errors: { name: ['name should not be empty'] } } : {}),
  };
}

interface NamedExample {
  summary: string;
  value: Record<string, unknown>;
}

/** The codes in the order their examples are listed: the most common one of the status first. */
export function orderCodes(codes: readonly ErrorCode[]): ErrorCode[] {
  const rank = (c: ErrorCode) => {
    const i = PREFERRED.indexOf(c);
    if (i >= 0) return i;
    return c.endsWith('_not_found') && c !== 'route_not_found'
      ? PREFERRED.length
      : PREFERRED.length + 1;
  };
  return [...codes].sort((a, b) => rank(a) - rank(b));
}

/**
 * `content` of a documented problem response: the ProblemDto schema with one named example per
 * code (Swagger UI and ReDoc offer them in a list, the first shown by default).
 */
export function problemContent(
  schemaRef: string,
  codes: readonly ErrorCode[],
  /** The codes answered as 404 here instead of their catalogue status (`ALSO_NOT_FOUND`). */
  as404: ReadonlySet<ErrorCode> = new Set(),
): Record<string, { schema: { $ref: string }; examples: Record<string, NamedExample> }> {
  const examples: Record<string, NamedExample> = {};
  for (const code of orderCodes(codes)) {
    const notFound = as404.has(code);
    examples[code] = {
      summary: `${notFound ? 404 : ERROR_CATALOGUE[code].status} ${code}`,
      value: problemExample(code, undefined, notFound),
    };
  }
  return { 'application/problem+json': { schema: { $ref: schemaRef }, examples } };
}
