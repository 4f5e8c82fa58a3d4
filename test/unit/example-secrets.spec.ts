import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXAMPLE_AUTH_SECRETS, loadConfig } from '../../src/config/config';

const ROOT = join(__dirname, '..', '..');

/** The documents a reader copies settings from. */
function documents(): string[] {
  const files = ['README.md', 'docker-compose.yml', 'Dockerfile', 'bench/README.md'];
  for (const dir of ['docs', '.']) {
    const abs = join(ROOT, dir);
    if (!existsSync(abs)) continue;
    for (const name of readdirSync(abs)) {
      if ((dir === 'docs' && name.endsWith('.md')) || name.startsWith('.env')) files.push(join(dir, name));
    }
  }
  return files.filter((f) => existsSync(join(ROOT, f)));
}

/**
 * Every literal AUTH_SECRET value shown in `text`: `AUTH_SECRET=value`, `AUTH_SECRET: value`,
 * `${AUTH_SECRET:-value}` (quoted or not). Commands (`$(openssl …)`), references (`$AUTH_SECRET`,
 * `${AUTH_SECRET:?…}`) and placeholders in angle brackets are not values.
 */
export function exampleSecrets(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\$\{AUTH_SECRET:?-([^}]+)\}/g,
    /\bAUTH_SECRET\s*[=:]\s*["']?([^\s"'`|]+)["']?/g,
  ];
  for (const re of patterns) {
    for (const m of text.matchAll(re)) {
      const value = m[1].trim();
      if (/^[$<]/.test(value) || value === '') continue;
      found.push(value);
    }
  }
  return found;
}

describe('no AUTH_SECRET example in the repository can sign tokens (issue #24)', () => {
  it('the parser finds example values and skips commands and references', () => {
    expect(exampleSecrets('AUTH_SECRET=abc123 npm start')).toEqual(['abc123']);
    expect(exampleSecrets('  AUTH_SECRET: ${AUTH_SECRET:-fallback-value}')).toEqual(['fallback-value']);
    expect(exampleSecrets('-e AUTH_SECRET="$(openssl rand -base64 48)"')).toEqual([]);
    expect(exampleSecrets('AUTH_SECRET: ${AUTH_SECRET:?set it}')).toEqual([]);
    expect(exampleSecrets("export AUTH_SECRET='quoted-value'")).toEqual(['quoted-value']);
  });

  it('every AUTH_SECRET value shown in the documents is refused', () => {
    const files = documents();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docker-compose.yml', 'Dockerfile']));
    const values = files.flatMap((f) => exampleSecrets(readFileSync(join(ROOT, f), 'utf8')).map((v) => [f, v]));
    const accepted = values.filter(([, v]) => {
      try {
        loadConfig({ AUTH_SECRET: v }, { persistSecret: false });
        return true;
      } catch {
        return false;
      }
    });
    // A new example must be added to EXAMPLE_AUTH_SECRETS (src/config/config.ts).
    expect(accepted).toEqual([]);
  });

  it('lists the historic docker-compose.yml fallback', () => {
    expect(EXAMPLE_AUTH_SECRETS).toContain('change-me-to-a-long-random-secret-of-32-chars');
  });
});
