/**
 * What the database keeps of a parsed result's title, automation id and suite path (titles ≤ 500
 * characters, automation ids ≤ 255, suite names ≤ 255, suite trees ≤ 4 levels deep). Pure, shared by
 * the parsers (which build suite paths in this form as they read, so that a path costs the same
 * whatever the nesting of the report) and by matching (which compares values in this form).
 */
import { createHash } from 'node:crypto';
import { cutText } from '../../common/normalize';

export const MAX_TITLE_CHARS = 500;
export const MAX_AUTOMATION_ID_CHARS = 255;
export const MAX_SUITE_NAME_CHARS = 255;
export const MAX_SUITE_DEPTH = 4;
/** Separator used when a suite path deeper than 4 levels is folded into its 4th level. */
export const FOLDED_SUITE_SEPARATOR = ' / ';

/** Cuts `text` to `max` characters (an ellipsis marks the cut). */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${cutText(text, max - 1)}…`;
}

/** Long automation ids already shortened (the same id recurs in every result that inherits it). */
const shortenedIds = new Map<string, string>();
const SHORTENED_IDS_KEPT = 1024;

/**
 * An automation id as stored: unchanged up to 255 characters; longer ones keep their start and end
 * with a hash of the whole value, so that the shortened id is still unique and stable.
 */
export function storageAutomationId(id: string): string {
  if (id.length <= MAX_AUTOMATION_ID_CHARS) return id;
  const known = shortenedIds.get(id);
  if (known !== undefined) return known;
  const digest = createHash('sha256').update(id).digest('hex').slice(0, 16);
  const room = MAX_AUTOMATION_ID_CHARS - digest.length - 2;
  const short = `${cutText(id, room)}~${digest}~`;
  if (shortenedIds.size >= SHORTENED_IDS_KEPT) shortenedIds.clear();
  shortenedIds.set(id, short);
  return short;
}

/** A case title as stored: at most 500 characters. */
export function storageTitle(title: string): string {
  return clipText(title.trim(), MAX_TITLE_CHARS);
}

/**
 * A suite path as stored: blank segments dropped, each name at most 255 characters, and at most 4
 * levels — deeper levels are folded into the 4th (`c / d / e`).
 */
export function storageSuitePath(path: readonly string[]): string[] {
  const segments = path.map((segment) => segment.trim()).filter((segment) => segment !== '');
  const head = segments.slice(0, MAX_SUITE_DEPTH - 1);
  const tail = segments.slice(MAX_SUITE_DEPTH - 1);
  const folded = tail.length > 0 ? [...head, tail.join(FOLDED_SUITE_SEPARATOR)] : head;
  return folded.map((segment) => clipText(segment, MAX_SUITE_NAME_CHARS));
}

/**
 * `storageSuitePath([...path, name])` for a `path` already in stored form, in time proportional to
 * `name` alone (never to the depth): the parsers extend a suite's path with each nested suite.
 */
export function extendStoragePath(path: readonly string[], name: string): string[] {
  const segment = name.trim();
  if (segment === '') return path as string[];
  if (path.length < MAX_SUITE_DEPTH) return [...path, clipText(segment, MAX_SUITE_NAME_CHARS)];
  const head = path.slice(0, MAX_SUITE_DEPTH - 1);
  const last = path[MAX_SUITE_DEPTH - 1] ?? '';
  // The last level is at most 255 characters: only the start of what is appended can show.
  const joined = `${last}${FOLDED_SUITE_SEPARATOR}${cutText(segment, MAX_SUITE_NAME_CHARS)}`;
  return [...head, clipText(joined, MAX_SUITE_NAME_CHARS)];
}
