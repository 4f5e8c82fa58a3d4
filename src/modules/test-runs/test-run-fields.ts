import type { JsonPart } from '../../common/http/json-body';
import { FieldSelection } from '../../common/pagination/fields';
import { fieldsAfterSnapshot, fieldsBeforeSnapshot, testRunJsonParts } from './test-run.mapper';
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
  // The mapper's two halves, filtered: no object of every field is spread together first.
  const before = pick(fieldsBeforeSnapshot(r), selection);
  const after = pick(fieldsAfterSnapshot(r), selection);
  if (!selection.has(SNAPSHOT_FIELD)) return [JSON.stringify({ ...before, ...after })];
  const head = JSON.stringify(before);
  const tail = JSON.stringify(after);
  return [
    `${head.slice(0, -1)}${head === '{}' ? '' : ','}"${SNAPSHOT_FIELD}":`,
    snapshot ?? Buffer.from('{}'),
    tail === '{}' ? '}' : `,${tail.slice(1)}`,
  ];
}

/** The selected keys of `all`, in its order. */
function pick(
  all: Record<string, unknown>,
  selection: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in all) if (selection.has(k)) out[k] = all[k];
  return out;
}
