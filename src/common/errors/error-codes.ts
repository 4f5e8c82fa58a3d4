/**
 * The one catalogue of error codes (CONTRACT §3). Every problem body's `code` comes from here,
 * with its HTTP status and title. Add a code here (and nowhere else) when a feature needs one;
 * the OpenAPI description lists this catalogue.
 */
export const ERROR_CATALOGUE = {
  // 400: only for what cannot be read at all, before any field is looked at: a request Node's HTTP
  // parser refuses (answered by the server's clientError handler, `src/common/http/client-errors.ts`)
  // and a body its Content-Encoding does not decode. Malformed input that can be read — malformed
  // JSON included — is a 422 validation_error.
  bad_request: { status: 400, title: 'Bad request' },
  invalid_content_encoding: { status: 400, title: 'Invalid content encoding' },
  // 401
  unauthorized: { status: 401, title: 'Unauthorized' },
  invalid_credentials: { status: 401, title: 'Unauthorized' },
  invalid_token: { status: 401, title: 'Unauthorized' },
  token_expired: { status: 401, title: 'Unauthorized' },
  token_revoked: { status: 401, title: 'Unauthorized' },
  invalid_api_key: { status: 401, title: 'Unauthorized' },
  user_disabled: { status: 401, title: 'Unauthorized' },
  // 403
  insufficient_project_role: { status: 403, title: 'Forbidden' },
  admin_required: { status: 403, title: 'Forbidden' },
  forbidden: { status: 403, title: 'Forbidden' },
  // 404
  route_not_found: { status: 404, title: 'Not found' },
  user_not_found: { status: 404, title: 'Not found' },
  api_key_not_found: { status: 404, title: 'Not found' },
  project_not_found: { status: 404, title: 'Not found' },
  project_member_not_found: { status: 404, title: 'Not found' },
  test_run_not_found: { status: 404, title: 'Not found' },
  /** `GET /imports/{id}`: no import of that id (or not visible to the caller). */
  import_not_found: { status: 404, title: 'Not found' },
  run_case_not_found: { status: 404, title: 'Not found' },
  run_case_row_not_found: { status: 404, title: 'Not found' },
  environment_not_found: { status: 404, title: 'Not found' },
  environment_revision_not_found: { status: 404, title: 'Not found' },
  product_not_found: { status: 404, title: 'Not found' },
  component_not_found: { status: 404, title: 'Not found' },
  test_case_not_found: { status: 404, title: 'Not found' },
  suite_not_found: { status: 404, title: 'Not found' },
  dataset_not_found: { status: 404, title: 'Not found' },
  dataset_binding_not_found: { status: 404, title: 'Not found' },
  test_plan_not_found: { status: 404, title: 'Not found' },
  milestone_not_found: { status: 404, title: 'Not found' },
  webhook_not_found: { status: 404, title: 'Not found' },
  webhook_delivery_not_found: { status: 404, title: 'Not found' },
  /** Run comparison with `base=previous`: no earlier run of the same project and environment. */
  no_previous_run: { status: 404, title: 'Not found' },
  // 405, 408, 412, 413, 415, 417, 431
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  /**
   * A write's `If-Match` names none of the resource's current ETag (someone changed it since the
   * client read it); the answer carries the current `ETag`, and nothing changed.
   */
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  /** An import request with more `file` parts than MAX_UPLOAD_FILES. */
  too_many_files: { status: 413, title: 'Too many files' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  unsupported_content_encoding: { status: 415, title: 'Unsupported content encoding' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  request_header_fields_too_large: { status: 431, title: 'Request header fields too large' },
  // 409
  invalid_status_transition: { status: 409, title: 'Invalid transition' },
  run_items_in_progress: { status: 409, title: 'Run items in progress' },
  run_archived: { status: 409, title: 'Run archived' },
  run_closed: { status: 409, title: 'Run closed' },
  run_import_not_allowed: { status: 409, title: 'Import not allowed' },
  user_already_exists: { status: 409, title: 'Conflict' },
  project_already_exists: { status: 409, title: 'Conflict' },
  project_member_already_exists: { status: 409, title: 'Conflict' },
  product_already_exists: { status: 409, title: 'Conflict' },
  component_already_exists: { status: 409, title: 'Conflict' },
  environment_already_exists: { status: 409, title: 'Conflict' },
  milestone_already_exists: { status: 409, title: 'Conflict' },
  test_plan_already_exists: { status: 409, title: 'Conflict' },
  suite_already_exists: { status: 409, title: 'Conflict' },
  run_case_already_exists: { status: 409, title: 'Conflict' },
  automation_id_already_exists: { status: 409, title: 'Conflict' },
  dataset_already_exists: { status: 409, title: 'Conflict' },
  dataset_already_bound: { status: 409, title: 'Conflict' },
  dataset_alias_already_exists: { status: 409, title: 'Conflict' },
  last_lead: { status: 409, title: 'Conflict' },
  /** Demoting or deactivating the last active administrator (only another one may, and none is left). */
  last_admin: { status: 409, title: 'Conflict' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_request_in_progress: { status: 409, title: 'Conflict' },
  /** A project has the most webhook subscriptions it may have (MAX_WEBHOOKS_PER_PROJECT). */
  webhook_limit_reached: { status: 409, title: 'Webhook limit reached' },
  // 422
  validation_error: { status: 422, title: 'Validation failed' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  invalid_current_password: { status: 422, title: 'Validation failed' },
  invalid_environment: { status: 422, title: 'Invalid environment' },
  invalid_milestone: { status: 422, title: 'Invalid milestone' },
  /**
   * A list's `cursor` that this service did not hand out for this very list: altered, forged, or
   * from another list, filter set or sort (the cursor's HMAC tag does not match).
   */
  invalid_cursor: { status: 422, title: 'Invalid cursor' },
  invalid_assignee: { status: 422, title: 'Invalid assignee' },
  invalid_owner: { status: 422, title: 'Invalid owner' },
  invalid_user: { status: 422, title: 'Invalid user' },
  component_project_mismatch: { status: 422, title: 'Component project mismatch' },
  component_dependency_cycle: { status: 422, title: 'Dependency cycle' },
  product_project_mismatch: { status: 422, title: 'Product project mismatch' },
  product_key_collision: { status: 422, title: 'Key generation failed' },
  component_key_collision: { status: 422, title: 'Key generation failed' },
  dataset_project_mismatch: { status: 422, title: 'Dataset project mismatch' },
  dataset_revision_not_found: { status: 422, title: 'Dataset revision not found' },
  dataset_binding_empty_selection: { status: 422, title: 'Empty dataset selection' },
  unknown_row_keys: { status: 422, title: 'Unknown row keys' },
  run_project_mismatch: { status: 422, title: 'Run project mismatch' },
  test_case_project_mismatch: { status: 422, title: 'Test case project mismatch' },
  test_case_status_not_allowed: { status: 422, title: 'Test case status not allowed' },
  suite_project_mismatch: { status: 422, title: 'Suite project mismatch' },
  suite_parent_cycle: { status: 422, title: 'Suite parent cycle' },
  suite_depth_limit_exceeded: { status: 422, title: 'Suite depth limit exceeded' },
  empty_upload: { status: 422, title: 'Empty upload' },
  invalid_junit_xml: { status: 422, title: 'Invalid JUnit XML' },
  unsupported_report_format: { status: 422, title: 'Unsupported report format' },
  invalid_tms_results_json: { status: 422, title: 'Invalid results JSON' },
  /** An import part that starts like gzip (bytes 1f 8b) but does not decompress. */
  invalid_gzip: { status: 422, title: 'Invalid gzip file' },
  no_active_cases: { status: 422, title: 'No active cases' },
  /**
   * A webhook URL whose host is, or resolves to, a loopback, private, link-local, multicast or
   * unspecified address (unless WEBHOOK_ALLOW_PRIVATE=true), or does not resolve.
   */
  webhook_url_not_allowed: { status: 422, title: 'Webhook URL not allowed' },
  // 429
  /**
   * Too many failed logins for the username or from the client address (POST /auth/login); sent
   * with Retry-After, before the password is looked at.
   */
  too_many_attempts: { status: 429, title: 'Too many attempts' },
  // 5xx
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  /** The database did not answer in time or refused the connection; sent with Retry-After. */
  database_unavailable: { status: 503, title: 'Database unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * Codes some operations answer as 404 Not found instead of their catalogue status
 * (`AppException.notFoundAs`; documented with `@Endpoint({ notFoundAs })`): a dataset revision is
 * 422 when a binding pins a missing one, 404 on `GET /datasets/{id}/revisions/{n}` (reference).
 */
export const ALSO_NOT_FOUND: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'dataset_revision_not_found',
]);

/**
 * Unique constraints (named in migrations) → the 409 they become, and the field it concerns.
 * Features add their constraint names here so a duplicate is never a 500.
 */
export const UNIQUE_CONSTRAINTS: Record<string, { code: ErrorCode; field: string; detail: string }> =
  {
    uq_users_username: {
      code: 'user_already_exists',
      field: 'username',
      detail: 'A user with this username already exists',
    },
    uq_users_email: {
      code: 'user_already_exists',
      field: 'email',
      detail: 'A user with this email address already exists',
    },
    pk_project_members: {
      code: 'project_member_already_exists',
      field: 'user_id',
      detail: 'The user is already a member of this project',
    },
  };

/** Registers unique-constraint mappings from a feature module (called at module load). */
export function registerUniqueConstraints(
  map: Record<string, { code: ErrorCode; field: string; detail: string }>,
): void {
  Object.assign(UNIQUE_CONSTRAINTS, map);
}
