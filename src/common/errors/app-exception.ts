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
  ) {
    super(detail);
    this.status = ERROR_CATALOGUE[code].status;
    this.title = ERROR_CATALOGUE[code].title;
  }

  /** 422 validation_error with one or more field paths. */
  static validation(errors: FieldErrors, detail = 'Request contains invalid fields'): AppException {
    return new AppException('validation_error', detail, errors);
  }

  /** 404 `<entity>_not_found`. */
  static notFound(code: ErrorCode, what: string): AppException {
    return new AppException(code, `${what} not found`);
  }
}
