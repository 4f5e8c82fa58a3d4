import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ValidateBy } from 'class-validator';
import { AppException } from '../../src/common/errors/app-exception';
import { validateInput } from '../../src/common/validation/validate';

/** The 422 `validateInput` throws for `body` (a request body), or null when it validates. */
export function bodyProblem(cls: new () => object, body: unknown): AppException | null {
  try {
    validateInput(cls, body, 'body');
    return null;
  } catch (e) {
    if (e instanceof AppException) return e;
    throw e;
  }
}

/**
 * Counts the objects whose validation ran: a DTO with a `@counter.Counted()` property adds one to
 * `counter.count` each time an instance of it is validated.
 */
export class ValidationCounter {
  count = 0;

  Counted(): PropertyDecorator {
    return ValidateBy({
      name: 'counted',
      validator: {
        validate: () => {
          this.count += 1;
          return true;
        },
      },
    });
  }
}

/** The non-test TypeScript files under `root` whose text matches `pattern` (paths from `root`). */
export function sourcesMatching(root: string, pattern: RegExp): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        if (pattern.test(readFileSync(path, 'utf8'))) found.push(relative(root, path));
      }
    }
  };
  walk(root);
  return found;
}
