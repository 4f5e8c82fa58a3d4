import type { JsonPart } from '../../common/http/json-body';
import { FieldSelection } from '../../common/pagination/fields';
import { testRunJsonParts, toTestRunDto } from './test-run.mapper';
import type { TestRunRow } from './test-runs.repository';

/** The run's field that carries the environment snapshot (served from the snapshot cache). */
export const SNAPSHOT_FIELD = 'environment_snapshot';

/**
 * The JSON of a run with only the selected fields, in the schema's order. `snapshot` is the
 * snapshot's bytes when the field is selected; without it no snapshot is needed at all.
 */
export function selectedRunJsonParts(
  r: TestRunRow,
  snapshot: Buffer | null,
  selection: FieldSelection,
): JsonPart[] {
  if (selection === null) return testRunJsonParts(r, snapshot ?? Buffer.from('{}'));
  const all = toTestRunDto(r, {}) as unknown as Record<string, unknown>;
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  let seen = false;
  for (const [k, v] of Object.entries(all)) {
    if (k === SNAPSHOT_FIELD) seen = true;
    else if (selection.has(k)) (seen ? after : before)[k] = v;
  }
  if (!selection.has(SNAPSHOT_FIELD)) return [JSON.stringify({ ...before, ...after })];
  const head = JSON.stringify(before);
  const tail = JSON.stringify(after);
  return [
    `${head.slice(0, -1)}${head === '{}' ? '' : ','}"${SNAPSHOT_FIELD}":`,
    snapshot ?? Buffer.from('{}'),
    tail === '{}' ? '}' : `,${tail.slice(1)}`,
  ];
}
