import { ERROR_CATALOGUE, ErrorCode } from './error-codes';

export type FieldErrors = Record<string, string[]>;

/** The one exception services throw. The problem filter renders it from the catalogue. */
export class AppException extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
    /** Another status for this one use of the code (the catalogue keeps its usual status). */
    statusOverride?: { status: number; title: string },
  ) {
    super(detail);
    this.status = statusOverride?.status ?? ERROR_CATALOGUE[code].status;
    this.title = statusOverride?.title ?? ERROR_CATALOGUE[code].title;
  }

  /** 422 validation_error with one or more field paths. */
  static validation(errors: FieldErrors, detail = 'Request contains invalid fields'): AppException {
    return new AppException('validation_error', detail, errors);
  }

  /**
   * 404 with a code the catalogue lists under another status (`dataset_revision_not_found` is 422 when
   * a binding names a missing revision, 404 when the revision itself is addressed by URL).
   */
  static notFoundAs(code: ErrorCode, detail: string): AppException {
    return new AppException(code, detail, undefined, undefined, { status: 404, title: 'Not found' });
  }

  /** 404 `<entity>_not_found`. */
  static notFound(code: ErrorCode, what: string): AppException {
    return new AppException(code, `${what} not found`);
  }
}

/**
 * A refusal of the caller's access to a project or resource (404 for one they cannot see, 403 for
 * too low a role), thrown by `AccessService`. Never stored under an `Idempotency-Key`: the caller's
 * access can change (a role raised, a member added), and a retry must be checked again, as the
 * guard's refusals of other routes are. Renders like any `AppException`.
 */
export class AccessRefusal extends AppException {
  static forbidden(detail: string): AccessRefusal {
    return new AccessRefusal('insufficient_project_role', detail);
  }

  static hidden(code: ErrorCode, what: string): AccessRefusal {
    return new AccessRefusal(code, `${what} not found`);
  }
}

/**
 * A multipart form refused by the handler that reads it as it arrives (422 `validation_error`: an
 * unknown or malformed field, a malformed multipart body): the body validation the guard gives a
 * JSON body before any work, found later only because the form is streamed. Like the guard's, never
 * stored under an `Idempotency-Key`: a retry with the form corrected runs. Renders like any
 * `AppException`.
 */
export class FormRefusal extends AppException {
  static of(errors: FieldErrors, detail = 'Request contains invalid fields'): FormRefusal {
    return new FormRefusal('validation_error', detail, errors);
  }
}
