/**
 * The OpenAPI schema of the JSON run report (`GET /test-runs/{id}/export?format=json`,
 * `formats/json.ts`), written out by hand because the report is streamed, not a DTO. The exports
 * e2e test holds every object of a real report to exactly the properties listed here.
 */
import { RUN_ITEM_STATUSES } from '../test-runs/run-summary';
import { CI_FIELDS } from '../test-runs/run-metadata';

type Schema = Record<string, unknown>;

const text: Schema = { type: 'string' };
const textOrNull: Schema = { type: 'string', nullable: true };
const uuid: Schema = { type: 'string', format: 'uuid' };
const uuidOrNull: Schema = { type: 'string', format: 'uuid', nullable: true };
const dateTime: Schema = { type: 'string', format: 'date-time' };
const dateTimeOrNull: Schema = { type: 'string', format: 'date-time', nullable: true };
const count: Schema = { type: 'integer', minimum: 0 };
const rate: Schema = { type: 'number', minimum: 0, maximum: 100 };
const status: Schema = { type: 'string', enum: [...RUN_ITEM_STATUSES] };
const texts: Schema = { type: 'array', items: text };

/** An object schema whose properties are all required (null where the schema allows it). */
function object(properties: Record<string, Schema>, description?: string): Schema {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    required: Object.keys(properties),
    properties,
  };
}

const testRun = object(
  {
    id: uuid,
    project_id: uuid,
    name: text,
    description: textOrNull,
    environment_name: textOrNull,
    environment_revision_number: { type: 'integer', nullable: true },
    milestone_name: textOrNull,
    build: textOrNull,
    ci: {
      ...object(Object.fromEntries(CI_FIELDS.map((f) => [f, textOrNull]))),
      nullable: true,
    },
    attributes: { type: 'object', additionalProperties: text },
    status: text,
    created_by: uuid,
    created_by_name: textOrNull,
    assignee: uuidOrNull,
    assignee_name: textOrNull,
    created_at: dateTime,
    updated_at: dateTime,
    started_at: dateTimeOrNull,
    completed_at: dateTimeOrNull,
    archived_at: dateTimeOrNull,
  },
  'The run, with the names of its environment, milestone and people',
);

const summary = object(
  {
    total: count,
    ...Object.fromEntries(RUN_ITEM_STATUSES.map((s) => [s, count])),
    pass_rate: rate,
    progress_rate: rate,
  },
  'Items by status (every item counts); rates in percent',
);

const failure = object({
  run_item_id: uuid,
  test_case_id: uuidOrNull,
  test_case_key: textOrNull,
  test_case_title: textOrNull,
  assignee_id: uuidOrNull,
  assignee_name: text,
  comment: textOrNull,
  defect_ids: texts,
});

const item = object({
  id: uuid,
  test_case: object(
    {
      id: uuidOrNull,
      key: textOrNull,
      title: textOrNull,
      priority: textOrNull,
      tags: texts,
      suite_name: textOrNull,
      automation_id: textOrNull,
    },
    'The case as the item recorded it (kept when the case was deleted: `id` null)',
  ),
  status,
  assignee_id: uuidOrNull,
  assignee_name: text,
  executed_by: uuidOrNull,
  executed_by_name: textOrNull,
  execution_count: count,
  last_executed_at: dateTimeOrNull,
  comment: textOrNull,
  defect_ids: texts,
  actual_result: textOrNull,
  started_at: dateTimeOrNull,
  finished_at: dateTimeOrNull,
  duration_ms: { type: 'integer', minimum: 0, nullable: true },
  time: { ...textOrNull, description: 'Duration in seconds, as JUnit writes `time`' },
  rows_total: count,
  rows_passed: count,
  rows_failed: count,
  created_at: dateTime,
  updated_at: dateTime,
});

/** The JSON report (`format=json`). */
export const REPORT_JSON_SCHEMA: Schema = object({
  report_type: { type: 'string', enum: ['test_run'] },
  format_version: { type: 'integer', enum: [1] },
  generated_at: dateTime,
  test_run: testRun,
  summary,
  by_status: {
    type: 'array',
    description: 'All nine statuses in a fixed order, zeros included',
    items: object({ status, count }),
  },
  by_assignee: {
    type: 'array',
    description: 'One entry per assignee (`Unassigned` for none), by count descending, then name',
    items: object({ assignee_id: uuidOrNull, assignee_name: text, count }),
  },
  failures: { type: 'array', description: 'Items in error, failure or xpassed', items: failure },
  items: { type: 'array', description: 'Every run item, ordered by case key', items: item },
});
