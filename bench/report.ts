/** Plain-text tables for the console. */

export function table(
  headers: string[],
  rows: Array<Array<string | number | null | undefined>>,
): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '–' : String(c))));
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)),
  );
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join(
    '\n',
  );
}

export function mb(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? '–' : `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

export function fixed(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
}
