/**
 * Pure rules of the test run status lifecycle (api.md §3.1, CONTRACT §5).
 *
 * No framework, no database: the service loads the run, counts the in-progress run items/rows, and
 * turns a failure result into an `AppException` with the same code and detail.
 */
import { hasRole, type ProjectRole } from '../../common/access/roles';
import type { ErrorCode } from '../../common/errors/error-codes';

/** Run statuses in lifecycle order. */
export const RUN_STATUSES = ['not_started', 'in_progress', 'completed', 'archived'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Type guard for a run status string. */
export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && (RUN_STATUSES as readonly string[]).includes(value);
}

/** The lifecycle timestamp fields of a run. */
export const RUN_TIMESTAMP_FIELDS = ['started_at', 'completed_at', 'archived_at'] as const;
export type RunTimestampField = (typeof RUN_TIMESTAMP_FIELDS)[number];

/** One allowed transition: the only source state, the minimum role and the timestamp it sets. */
export interface RunTransitionRule {
  from: RunStatus;
  to: RunStatus;
  minRole: ProjectRole;
  timestamp: RunTimestampField;
}

/** The only accepted transitions (api.md §3.1), keyed by target status. */
export const RUN_TRANSITIONS: Readonly<Partial<Record<RunStatus, RunTransitionRule>>> = {
  in_progress: {
    from: 'not_started',
    to: 'in_progress',
    minRole: 'tester',
    timestamp: 'started_at',
  },
  completed: { from: 'in_progress', to: 'completed', minRole: 'tester', timestamp: 'completed_at' },
  archived: { from: 'completed', to: 'archived', minRole: 'lead', timestamp: 'archived_at' },
};

/** Which target status each timestamp field belongs to. */
export const RUN_TIMESTAMP_STATUS: Readonly<Record<RunTimestampField, RunStatus>> = {
  started_at: 'in_progress',
  completed_at: 'completed',
  archived_at: 'archived',
};

/**
 * Minimum role for a PATCH of a run: `tester`, or `lead` when the requested status is `archived`
 * (api.md §4.1). `to` absent means a metadata-only PATCH.
 */
export function requiredRoleForRunPatch(to?: RunStatus | null): ProjectRole {
  return to === 'archived' ? 'lead' : 'tester';
}

export type RunTimestamps = Record<RunTimestampField, Date | null>;

export interface RunTransitionInput {
  /** Current status of the run. */
  from: RunStatus;
  /** Requested status; `undefined`/`null` = the PATCH does not change the status. */
  to?: RunStatus | null;
  /** Caller's effective project role (an administrator counts as `lead`). */
  role: ProjectRole;
  /**
   * Number of run items of the run that are `in_progress` or have a row `in_progress`
   * (CONTRACT §5). Only consulted for the transition to `completed`.
   */
  itemsInProgress: number;
  /** Timestamps present in the PATCH body; `null`/`undefined` both mean "not supplied". */
  explicitTimestamps: Partial<RunTimestamps>;
  /** Lifecycle timestamps currently stored on the run. */
  current: RunTimestamps;
  /** Server clock. */
  now: Date;
}

export type RunTransitionErrorCode = Extract<
  ErrorCode,
  | 'invalid_status_transition'
  | 'run_items_in_progress'
  | 'insufficient_project_role'
  | 'validation_error'
  | 'run_archived'
>;

export interface RunTransitionFailure {
  ok: false;
  code: RunTransitionErrorCode;
  detail: string;
  /** Only for `validation_error`: field name → messages. */
  errors?: Record<string, string[]>;
}

export interface RunTransitionSuccess {
  ok: true;
  /** Status after the PATCH (equals `from` when no status change was requested). */
  status: RunStatus;
  /** True when the status changes. */
  changed: boolean;
  /** Lifecycle timestamps to write (empty when the status does not change). */
  timestamps: Partial<Record<RunTimestampField, Date>>;
}

export type RunTransitionResult = RunTransitionSuccess | RunTransitionFailure;

function isSupplied(value: Date | null | undefined): value is Date {
  return value !== null && value !== undefined;
}

/**
 * Request-shape check of the lifecycle timestamps, usable before the run is loaded: each supplied
 * timestamp must be a valid date and must come with the status change it belongs to
 * (`started_at` ↔ `in_progress`, `completed_at` ↔ `completed`, `archived_at` ↔ `archived`).
 * Returns a `validation_error` with one entry per offending field, or `null` when fine.
 */
export function checkRunTimestampFields(
  to: RunStatus | null | undefined,
  explicitTimestamps: Partial<RunTimestamps>,
): RunTransitionFailure | null {
  const errors: Record<string, string[]> = {};
  for (const field of RUN_TIMESTAMP_FIELDS) {
    const value = explicitTimestamps[field];
    if (!isSupplied(value)) continue;
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
      errors[field] = [`${field} must be a valid ISO 8601 datetime`];
      continue;
    }
    const status = RUN_TIMESTAMP_STATUS[field];
    if (to !== status) {
      errors[field] = [`${field} is accepted only together with the status change to ${status}`];
    }
  }
  if (Object.keys(errors).length === 0) return null;
  return { ok: false, code: 'validation_error', detail: 'Request contains invalid fields', errors };
}

/** The lifecycle timestamp that must not be later than `field` (nearest earlier non-null one). */
function precedingTimestamp(
  field: RunTimestampField,
  current: RunTimestamps,
): { field: RunTimestampField; value: Date } | null {
  const index = RUN_TIMESTAMP_FIELDS.indexOf(field);
  for (let i = index - 1; i >= 0; i--) {
    const previous = RUN_TIMESTAMP_FIELDS[i];
    const value = current[previous];
    if (value) return { field: previous, value };
  }
  return null;
}

function runItemsInProgressDetail(count: number): string {
  const what = count === 1 ? '1 run item is' : `${count} run items are`;
  return `The run cannot be completed while ${what} still in_progress`;
}

/**
 * Decides a PATCH of a run's status (api.md §3.1, CONTRACT §5). Accepted transitions are exactly
 * not_started→in_progress (tester), in_progress→completed (tester, nothing in progress) and
 * completed→archived (lead); everything else, including same-state moves and any move to
 * `not_started`, is `invalid_status_transition`.
 *
 * Checks run in this order; the first failure wins:
 * 1. `validation_error` — a supplied timestamp is not a date or comes without its transition
 *    (request shape; CONTRACT §3 puts shape before role and domain rules).
 * 2. `insufficient_project_role` — below `tester`, or below `lead` when the target is `archived`.
 * 3. `invalid_status_transition` — the target is not reachable from the current status (an
 *    archived run has no way out: api.md §3.1 rule 1 names this code for every other change).
 * 4. `run_archived` — a PATCH without a status change on an archived run (read-only).
 * 5. `run_items_in_progress` — completion while `itemsInProgress > 0`.
 * 6. `validation_error` — an explicit timestamp earlier than the preceding lifecycle timestamp
 *    (`completed_at` < `started_at`, `archived_at` < `completed_at`; `started_at` has no lower
 *    bound because a run may be recorded after it was executed).
 *
 * On success the transition's timestamp is the explicit value or, when omitted, `now`; if `now` is
 * earlier than the preceding lifecycle timestamp (only possible after a future explicit timestamp),
 * the preceding timestamp is used instead so that started_at ≤ completed_at ≤ archived_at holds.
 */
export function decideRunTransition(input: RunTransitionInput): RunTransitionResult {
  const { from, role, itemsInProgress, explicitTimestamps, current, now } = input;
  const to = input.to ?? null;

  const shape = checkRunTimestampFields(to, explicitTimestamps);
  if (shape) return shape;

  const minRole = requiredRoleForRunPatch(to);
  if (!hasRole(role, minRole)) {
    return {
      ok: false,
      code: 'insufficient_project_role',
      detail: `Required role is at least ${minRole}`,
    };
  }

  if (to === null) {
    if (from === 'archived') {
      return {
        ok: false,
        code: 'run_archived',
        detail: 'The run is archived and read-only; it can only be deleted',
      };
    }
    return { ok: true, status: from, changed: false, timestamps: {} };
  }

  const rule = RUN_TRANSITIONS[to];
  if (!rule) {
    return {
      ok: false,
      code: 'invalid_status_transition',
      detail: `${to} is the initial status and cannot be set again (current status: ${from})`,
    };
  }
  if (rule.from !== from) {
    return {
      ok: false,
      code: 'invalid_status_transition',
      detail: `${to} is allowed only from ${rule.from} (current status: ${from})`,
    };
  }

  if (to === 'completed' && itemsInProgress > 0) {
    return {
      ok: false,
      code: 'run_items_in_progress',
      detail: runItemsInProgressDetail(itemsInProgress),
    };
  }

  const field = rule.timestamp;
  const explicit = explicitTimestamps[field];
  const preceding = precedingTimestamp(field, current);
  if (isSupplied(explicit)) {
    if (preceding && explicit.getTime() < preceding.value.getTime()) {
      const message = `${field} must not be earlier than ${preceding.field} (${preceding.value.toISOString()})`;
      return {
        ok: false,
        code: 'validation_error',
        detail: message,
        errors: { [field]: [message] },
      };
    }
    return { ok: true, status: to, changed: true, timestamps: { [field]: explicit } };
  }

  const value =
    preceding && preceding.value.getTime() > now.getTime() ? new Date(preceding.value) : now;
  return { ok: true, status: to, changed: true, timestamps: { [field]: value } };
}
