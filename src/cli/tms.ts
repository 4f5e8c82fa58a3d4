#!/usr/bin/env node
/**
 * `tms`: the command-line client of the test management service (issue #18 §4), for CI pipelines.
 * Only node: modules and commander — nothing of the server — so it starts at once;
 * `src/cli/tms-deps.spec.ts` checks it.
 */
import { Command, CommanderError, Option } from 'commander';
import { Api, DEFAULT_TIMEOUT_SECONDS, Io } from './client';
import {
  compareCommand,
  FILES_PER_REQUEST,
  importCommand,
  ImportOptions,
  MAX_FILES_PER_REQUEST,
  readinessCommand,
} from './commands';
import { CliError, UsageError } from './errors';
import { EXIT, EXIT_CODES_HELP, ExitCode } from './exit-codes';
import { DEFAULT_RETRIES, MAX_RETRIES } from './retry';

interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
  retries: string;
  timeout: string;
}

function wholeNumber(value: string, name: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

const CONFIG_HELP = [
  'Configuration:',
  '  TMS_URL      the server, e.g. https://tms.example.com (or --url)',
  '  TMS_API_KEY  a personal API key (POST /api/v1/users/me/api-keys), sent as X-API-Key (or --api-key)',
].join('\n');

const IMPORT_HELP = [
  '',
  'Files: paths, directories (their *.xml and *.json files) and globs (*, ** and ?; quote them to let',
  'tms expand them rather than the shell). Target: --run <id> imports into that run; --run-name <name>',
  'imports into the newest open run of that name, creating it (with --build, --environment, --milestone;',
  'build defaults to the CI provider\'s "<branch> #<number> (<sha>)" on GitHub Actions, GitLab CI and',
  "Jenkins) when there is none; neither: the server picks or creates the run from each report's name.",
  "A run tms or the server creates gets the CI provider's metadata (ci: provider, branch, commit_sha,",
  'job_url, pipeline_id) unless --branch / --commit-sha are given, and the --attribute key=value pairs.',
  'Into a run (--run, --run-name), results of cases not yet in the run are applied only with',
  '--create-missing-cases.',
  '',
  'All files go in one request (one per 1,000 files, or --files-per-request), as one import; a server',
  'with a lower MAX_UPLOAD_FILES answers 413 too_many_files, and tms halves the request and sends it',
  "again. Every request carries an Idempotency-Key derived from the files' names and SHA-256 and the",
  'target, so running the step again with the same CI variables applies nothing twice. Network errors,',
  '429, 5xx and 409 idempotency_request_in_progress are retried with exponential backoff, or after',
  'Retry-After when it is longer (--retries).',
  '',
  '--async asks for a background import (Prefer: respond-async) and --wait follows it to its end: this',
  'needs a server with background imports; an older server simply imports synchronously. A dry run is',
  'never queued: with --dry-run, --async is ignored and the preview is answered at once.',
].join('\n');

/** The program; `main` runs it without exiting the process. */
export function buildProgram(io: Io, setExit: (code: ExitCode) => void): Command {
  const program = new Command('tms');
  const api = (cmd: Command): { api: Api; json: boolean } => {
    const g = cmd.optsWithGlobals<GlobalOptions>();
    const url = g.url ?? io.env.TMS_URL;
    if (!url) throw new UsageError('no server: set TMS_URL or give --url');
    if (!/^https?:\/\/[^/]/.test(url))
      throw new UsageError(`--url must be an http(s) URL, got ${url}`);
    const retries = wholeNumber(g.retries, '--retries', 0, MAX_RETRIES);
    const timeout = wholeNumber(g.timeout, '--timeout', 1, 86_400);
    return {
      api: new Api(url, g.apiKey ?? io.env.TMS_API_KEY, retries, timeout * 1000, io),
      json: g.json === true,
    };
  };

  program
    .description('Command-line client of the test management service, for CI pipelines.')
    .option('--url <url>', 'server URL (default: $TMS_URL)')
    .option('--api-key <key>', 'API key, sent as X-API-Key (default: $TMS_API_KEY)')
    .option('--json', "print the server's JSON instead of a table")
    .option(
      '--retries <n>',
      `retries after a network error, 429, 5xx or 409 idempotency_request_in_progress (0-${MAX_RETRIES})`,
      String(DEFAULT_RETRIES),
    )
    .option('--timeout <seconds>', 'deadline of one HTTP request', String(DEFAULT_TIMEOUT_SECONDS))
    .addHelpText('after', `\n${CONFIG_HELP}\n\n${EXIT_CODES_HELP}`)
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });

  program
    .command('import')
    .description('import JUnit XML / results JSON reports into a project or run')
    .argument('<files...>', 'report files, directories or globs')
    .requiredOption('--project <id>', 'project id')
    .addOption(new Option('--run <id>', 'import into this run').conflicts('runName'))
    .addOption(
      new Option('--run-name <name>', 'import into the open run of this name, created if missing'),
    )
    .option('--build <build>', 'build of the run tms creates (default: from the CI provider)')
    .option('--branch <branch>', "ci.branch of the run tms creates (default: the CI provider's)")
    .option(
      '--commit-sha <sha>',
      "ci.commit_sha of the run tms creates (default: the CI provider's)",
    )
    .option(
      '--attribute <key=value>',
      'an attribute of the run tms creates (repeatable, at most 50)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--environment <id>', 'environment of the run tms creates')
    .option('--milestone <id>', 'milestone of the run tms creates')
    .option(
      '--create-missing-cases',
      'create test cases for results that match none (and add cases missing from the run)',
    )
    .option('--dry-run', 'preview: match and count, write nothing')
    .option('--async', 'background import (needs a server with background imports)')
    .option('--wait', 'with --async: wait until the background import ends')
    .option('--fail-on-failures', 'exit 1 when the reports have failing tests (failure or error)')
    .option(
      '--files-per-request <n>',
      `files per import request (1-${MAX_FILES_PER_REQUEST}; halved on 413 too_many_files)`,
      String(FILES_PER_REQUEST),
    )
    .addHelpText('after', `${IMPORT_HELP}\n\n${EXIT_CODES_HELP}`)
    .action(
      async (
        files: string[],
        opts: Omit<ImportOptions, 'filesPerRequest'> & { filesPerRequest: string },
        cmd: Command,
      ) => {
        const filesPerRequest = wholeNumber(
          opts.filesPerRequest,
          '--files-per-request',
          1,
          MAX_FILES_PER_REQUEST,
        );
        const { api: client, json } = api(cmd);
        setExit(await importCommand(client, files, { ...opts, filesPerRequest }, { json }, io));
      },
    );

  program
    .command('compare')
    .description(
      'newly failing and fixed tests of a run against a base run, with environment and dataset changes',
    )
    .argument('<run>', 'run id')
    .addOption(new Option('--base <run>', 'base run id').conflicts('previous'))
    .option('--previous', 'base: the previous run of the same project and environment')
    .option('--fail-on-new-failures', 'exit 1 when any test newly fails')
    .addHelpText('after', `\n${EXIT_CODES_HELP}`)
    .action(async (run: string, opts, cmd: Command) => {
      const { api: client, json } = api(cmd);
      setExit(await compareCommand(client, run, opts, { json }, io));
    });

  program
    .command('readiness')
    .description(
      'release readiness of a product: the verdict and its blockers; exit 1 when not ready',
    )
    .argument('<product>', 'product id')
    .option('--environment <id>', 'only results of runs on this environment')
    .option('--build <build>', 'only results of runs with exactly this build')
    .option(
      '--min-risk-level <level>',
      'components at or above this risk level (low, medium, high, critical)',
    )
    .addHelpText('after', `\n${EXIT_CODES_HELP}`)
    .action(async (product: string, opts, cmd: Command) => {
      const { api: client, json } = api(cmd);
      setExit(await readinessCommand(client, product, opts, { json }, io));
    });

  for (const cmd of program.commands) {
    cmd
      .exitOverride()
      .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });
  }
  return program;
}

/** Runs `tms` with these arguments (without `node tms`) and answers its exit code. */
export async function main(argv: readonly string[], io: Io): Promise<ExitCode> {
  let code: ExitCode = EXIT.OK;
  const program = buildProgram(io, (c) => (code = c));
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT.REFUSED;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version end with 0; every other complaint of commander is a usage error.
      return err.exitCode === 0 ? EXIT.OK : EXIT.REFUSED;
    }
    if (err instanceof CliError) {
      io.stderr(err.message.startsWith('tms:') ? err.message : `tms: ${err.message}\n`);
      return err.exitCode;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.stderr(`tms: ${message}\n`);
    return EXIT.REFUSED;
  }
}

/** The real surroundings. */
export function processIo(): Io {
  return {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    env: process.env,
    cwd: process.cwd(),
    fetch: (...args) => fetch(...args),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    random: Math.random,
    now: Date.now,
  };
}

if (require.main === module) {
  // `tms … | head`: a reader that goes away ends tms quietly, not with a stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE')
      process.stderr.write(`tms: cannot write the output: ${err.message}\n`);
    process.exit(err.code === 'EPIPE' ? (process.exitCode ?? EXIT.OK) : EXIT.REFUSED);
  });
  void main(process.argv.slice(2), processIo()).then((code) => {
    process.exitCode = code;
  });
}
