import { FixtureRef } from './fixtures';
import type { FuzzRequest, PathValue, QueryValue } from './arbitraries';
import { Raw } from './values';

/**
 * Readable one-screen descriptions of generated requests for failure reports: long strings, big
 * arrays and deep nesting are summarised (`"xxxx…" (100000 chars)`, `Array(10000).fill("a")`,
 * `<65 levels of nesting>`), lone surrogates are shown escaped, fixture ids by their kind.
 */
export function summarize(value: unknown, budget = { left: 1500 }): string {
  if (budget.left <= 0) return '…';
  const out = summarizeInner(value, 0, budget);
  budget.left -= out.length;
  return out;
}

function nesting(value: unknown): number {
  let depth = 0;
  let v = value;
  while (v !== null && typeof v === 'object' && !(v instanceof FixtureRef)) {
    depth += 1;
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
    v = children.find((c) => c !== null && typeof c === 'object');
    if (v === undefined) break;
  }
  return depth;
}

function summarizeInner(value: unknown, depth: number, budget: { left: number }): string {
  if (value instanceof FixtureRef || value instanceof Raw) return String(value);
  if (typeof value === 'string') {
    return value.length > 80 ? `${JSON.stringify(value.slice(0, 24))}… (${value.length} chars)` : JSON.stringify(value);
  }
  if (value === null || typeof value !== 'object') return String(value);
  if (depth === 0 && nesting(value) > 8) {
    return `<${nesting(value)} levels of nesting: ${JSON.stringify(value).slice(0, 40)}…>`;
  }
  if (Array.isArray(value)) {
    if (value.length > 10) {
      const same = value.every((v) => v === value[0] || JSON.stringify(v) === JSON.stringify(value[0]));
      return same
        ? `Array(${value.length}).fill(${summarizeInner(value[0], depth + 1, budget)})`
        : `[${value.slice(0, 5).map((v) => summarizeInner(v, depth + 1, budget)).join(', ')}, … ${value.length} items]`;
    }
    return `[${value.map((v) => summarizeInner(v, depth + 1, budget)).join(', ')}]`;
  }
  const entries = Object.entries(value);
  const shown = entries.slice(0, 12).map(([k, v]) => `${summarizeInner(k, depth + 1, budget)}: ${summarizeInner(v, depth + 1, budget)}`);
  if (entries.length > 12) shown.push(`… ${entries.length} keys`);
  return `{${shown.join(', ')}}`;
}

function part(v: PathValue | QueryValue | string): string {
  return v instanceof FixtureRef || v instanceof Raw ? String(v) : summarize(v);
}

/** `POST /api/v1/run-cases/bulk as lead` plus query, credential and body lines. */
export function describeRequest(r: FuzzRequest): string {
  let i = 0;
  const path = r.op.path.replace(/\{[^}]+\}/g, () => `{${part(r.path[i++])}}`);
  const lines = [`${r.op.method.toUpperCase()} ${path} as ${r.auth}`];
  if (r.credential) lines.push(`  credential: ${r.credential[0]}: ${summarize(r.credential[1])}`);
  for (const [k, v] of r.headers ?? []) lines.push(`  header ${k}: ${summarize(v)}`);
  if (r.query.length > 0) lines.push(`  query: ${r.query.map(([k, v]) => `${part(k)}=${part(v)}`).join(' & ')}`);
  const b = r.body;
  if (b.kind === 'json') lines.push(`  body (application/json): ${summarize(b.value)}`);
  if (b.kind === 'raw') lines.push(`  body (${b.contentType || 'no content-type'}): ${summarize(b.bytes.toString())}`);
  if (b.kind === 'multipart') {
    for (const f of b.files) lines.push(`  file part ${JSON.stringify(f.field)}: ${f.label} as ${summarize(f.filename)}`);
    for (const [k, v] of b.fields) lines.push(`  field ${k}=${summarize(v)}`);
  }
  return lines.join('\n');
}
