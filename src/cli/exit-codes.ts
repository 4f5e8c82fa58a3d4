/** Exit codes of `tms` (documented in `tms --help`, the README and docs/ci.md). */
export const EXIT = {
  /** Everything went through (and no gate tripped). */
  OK: 0,
  /** A gate tripped: failing tests (`--fail-on-failures`), newly failing tests (`--fail-on-new-failures`), not ready. */
  GATE: 1,
  /** The server refused the request (4xx), or the command line is wrong. */
  REFUSED: 2,
  /**
   * The server could not be reached, or kept answering 5xx/429 (or 409
   * `idempotency_request_in_progress`: the first request with that key still runs), after the retries.
   */
  UNAVAILABLE: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = [
  'Exit codes:',
  '  0  success',
  '  1  a gate tripped: failing tests with --fail-on-failures, newly failing tests with',
  '     compare --fail-on-new-failures, readiness verdict not_ready',
  '  2  the server refused the request (4xx: the problem title, detail and code are printed on',
  '     stderr) or the command line is wrong',
  '  3  the server was unreachable or kept answering 5xx/429 (or 409 idempotency_request_in_progress)',
  '     after the retries: running the step again is safe',
].join('\n');
