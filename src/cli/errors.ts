import { EXIT, ExitCode } from './exit-codes';

/** A failure `tms` reports in a few lines on stderr (never a stack trace) and exits with its code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

/** The command line is wrong (exit 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.REFUSED);
  }
}
