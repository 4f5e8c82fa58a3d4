/**
 * Run metadata from CI (issue #24 item 5): free `attributes` (string → string) and the `ci` object
 * (provider, branch, commit, job URL, pipeline id). Pure rules shared by the run DTOs, the list
 * filters, the import form fields and the exports; no NestJS, no I/O.
 */

/** Most attributes one run carries. */
export const MAX_RUN_ATTRIBUTES = 50;
/** Longest attribute key, in characters. */
export const ATTRIBUTE_KEY_MAX_LENGTH = 64;
/** Longest attribute value, in characters (code points). */
export const ATTRIBUTE_VALUE_MAX_LENGTH = 256;
/**
 * An attribute key: 1–64 ASCII characters, letters, digits and `_ . - /`, starting with a letter or
 * a digit. No `:` (the filter `attribute=key:value` splits there) and no `=` (`tms --attribute
 * key=value`), no spaces or quotes, so a key reads the same in every export.
 */
export const ATTRIBUTE_KEY_RE = /^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,63}$/;
/** The key rule in words (messages, OpenAPI descriptions). */
export const ATTRIBUTE_KEY_RULE =
  `1–${ATTRIBUTE_KEY_MAX_LENGTH} characters: ASCII letters, digits and _ . - /, ` +
  'starting with a letter or a digit';
/** Control characters (C0 and DEL) are refused in attribute values and CI fields. */
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/** Longest `ci.provider`. */
export const CI_PROVIDER_MAX_LENGTH = 64;
/** Longest `ci.branch` (a git ref name). */
export const CI_BRANCH_MAX_LENGTH = 255;
/** Shortest and longest `ci.commit_sha` (hex digits; 40 for SHA-1, 64 for SHA-256 commits). */
export const COMMIT_SHA_MIN_LENGTH = 7;
export const COMMIT_SHA_MAX_LENGTH = 64;
export const COMMIT_SHA_RE = /^[0-9a-fA-F]{7,64}$/;
/** Longest `ci.job_url`. */
export const CI_JOB_URL_MAX_LENGTH = 2048;
/** Longest `ci.pipeline_id`. */
export const CI_PIPELINE_ID_MAX_LENGTH = 255;

/** The fields of a run's `ci` object, in the order they are answered. */
export const CI_FIELDS = ['provider', 'branch', 'commit_sha', 'job_url', 'pipeline_id'] as const;
export type CiField = (typeof CI_FIELDS)[number];
export type RunCi = Record<CiField, string | null>;
export type RunAttributes = Record<string, string>;

/** The `ci_*` columns of test_runs, by field. */
export const CI_COLUMNS: Record<CiField, `ci_${CiField}`> = {
  provider: 'ci_provider',
  branch: 'ci_branch',
  commit_sha: 'ci_commit_sha',
  job_url: 'ci_job_url',
  pipeline_id: 'ci_pipeline_id',
};

const MAX_LENGTHS: Record<CiField, number> = {
  provider: CI_PROVIDER_MAX_LENGTH,
  branch: CI_BRANCH_MAX_LENGTH,
  commit_sha: COMMIT_SHA_MAX_LENGTH,
  job_url: CI_JOB_URL_MAX_LENGTH,
  pipeline_id: CI_PIPELINE_ID_MAX_LENGTH,
};

function chars(s: string): number {
  return [...s].length;
}

/** True for an absolute http(s) URL with a host. */
export function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** Why a value of a `ci` field is refused, or null when it is acceptable (blank: see callers). */
export function ciFieldProblem(field: CiField, value: string): string | null {
  const max = MAX_LENGTHS[field];
  if (chars(value) > max) return `${field} must be at most ${max} characters long`;
  if (CONTROL_RE.test(value)) return `${field} must not contain control characters`;
  if (field === 'commit_sha' && !COMMIT_SHA_RE.test(value)) {
    return `commit_sha must be ${COMMIT_SHA_MIN_LENGTH} to ${COMMIT_SHA_MAX_LENGTH} hexadecimal digits`;
  }
  if (field === 'job_url' && !isHttpUrl(value)) {
    return 'job_url must be an absolute http:// or https:// URL';
  }
  return null;
}

/** Why an attribute value is refused, or null. */
export function attributeValueProblem(key: string, value: unknown): string | null {
  if (typeof value !== 'string') return `attribute "${key}" must have a string value`;
  if (chars(value) > ATTRIBUTE_VALUE_MAX_LENGTH) {
    return `attribute "${key}" must be at most ${ATTRIBUTE_VALUE_MAX_LENGTH} characters long`;
  }
  if (CONTROL_RE.test(value)) return `attribute "${key}" must not contain control characters`;
  return null;
}

/** A key shown in a message: quoted, cut. */
function shown(key: string): string {
  return JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key);
}

/**
 * Every problem of an `attributes` value (a JSON object of string values, at most
 * {@link MAX_RUN_ATTRIBUTES} keys following {@link ATTRIBUTE_KEY_RE}); empty when acceptable.
 */
export function attributesProblems(value: unknown, limit = 20): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return ['attributes must be an object of string values'];
  }
  const problems: string[] = [];
  const keys = Object.keys(value);
  if (keys.length > MAX_RUN_ATTRIBUTES) {
    problems.push(`attributes has ${keys.length} keys; at most ${MAX_RUN_ATTRIBUTES} are allowed`);
  }
  for (const key of keys) {
    if (problems.length >= limit) break;
    if (!ATTRIBUTE_KEY_RE.test(key)) {
      problems.push(`attribute key ${shown(key)} is not allowed: ${ATTRIBUTE_KEY_RULE}`);
      continue;
    }
    const p = attributeValueProblem(key, (value as Record<string, unknown>)[key]);
    if (p !== null) problems.push(p);
  }
  return problems;
}

/** A `key:value` pair (the list filter and the import form field): split at the first `:`. */
export function parseAttributePair(
  text: string,
): { key: string; value: string } | { problem: string } {
  const at = text.indexOf(':');
  if (at < 0) return { problem: `${shown(text)} must be key:value` };
  const key = text.slice(0, at);
  const value = text.slice(at + 1);
  if (!ATTRIBUTE_KEY_RE.test(key)) {
    return { problem: `attribute key ${shown(key)} is not allowed: ${ATTRIBUTE_KEY_RULE}` };
  }
  const p = attributeValueProblem(key, value);
  return p === null ? { key, value } : { problem: p };
}

/**
 * The `attribute=key:value` filters as containment objects, one per pair (every pair must match).
 * Throws nothing: invalid pairs were refused by the query DTO; any left are skipped.
 */
export function attributeFilters(values: readonly string[] | undefined): RunAttributes[] {
  const out: RunAttributes[] = [];
  for (const text of values ?? []) {
    const pair = parseAttributePair(text);
    if ('key' in pair) out.push({ [pair.key]: pair.value });
  }
  return out;
}

/** A stored commit SHA: lowercase. */
export function normalizeCommitSha(sha: string): string {
  return sha.toLowerCase();
}

/** The answered `ci` object: null when the run has no CI field at all, else all five keys. */
export function ciOf(row: Readonly<Record<`ci_${CiField}`, string | null>>): RunCi | null {
  const ci: RunCi = {
    provider: row.ci_provider,
    branch: row.ci_branch,
    commit_sha: row.ci_commit_sha,
    job_url: row.ci_job_url,
    pipeline_id: row.ci_pipeline_id,
  };
  return CI_FIELDS.every((f) => ci[f] === null) ? null : ci;
}

/**
 * A `ci` input (JSON body) as stored: blank or absent fields → null, the commit SHA lowercased.
 * `null` → every field null.
 */
export function ciToStore(
  input: Partial<Record<CiField, string | null>> | null | undefined,
): RunCi {
  const out = {} as RunCi;
  for (const f of CI_FIELDS) {
    const v = input?.[f];
    out[f] = typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
  }
  if (out.commit_sha !== null) out.commit_sha = normalizeCommitSha(out.commit_sha);
  return out;
}

/** Attributes sorted by key (a stable order for exports). */
export function sortedAttributes(attributes: RunAttributes | null | undefined): [string, string][] {
  return Object.entries(attributes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
