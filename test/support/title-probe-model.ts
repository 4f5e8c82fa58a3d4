import type { CandidateCase, CandidateFilter } from '../../src/modules/imports/matching';

/**
 * What `test_case_title_probe(title)` (migration `TestCaseTitleProbe`) computes, written out in
 * TypeScript: the unit tests use it as the database's side, and an e2e test checks the SQL
 * function against it on random titles.
 */
export function sqlTitleProbe(title: string): string {
  let out = '';
  for (const ch of title) {
    const code = ch.charCodeAt(0);
    if (code > 0x7f) return '';
    const lower = code >= 0x41 && code <= 0x5a ? String.fromCharCode(code + 0x20) : ch;
    if (/[abcdfghijklmnopqruvwxyz0-9]/.test(lower)) out += lower;
  }
  return out;
}

/** The rows `ImportRepository.loadCandidates` answers for `filter`, on a list of cases. */
export function filterCandidates(
  cases: readonly CandidateCase[],
  filter: CandidateFilter,
): CandidateCase[] {
  const ids = new Set(filter.automationIds);
  const probes = new Set(filter.titleProbes);
  return cases.filter(
    (c) =>
      (c.automation_id !== null && ids.has(c.automation_id)) ||
      (c.status === 'active' && probes.has(sqlTitleProbe(c.title))),
  );
}
