import { PROJECT_ROLES, type ProjectRole } from '../../common/access/roles';
import {
  RUN_STATUSES,
  RunStatus,
  RunTimestamps,
  RunTransitionInput,
  RunTransitionResult,
  checkRunTimestampFields,
  decideRunTransition,
  isRunStatus,
  requiredRoleForRunPatch,
} from './run-status';

const NOW = new Date('2026-05-01T10:00:00.000Z');
const T_START = new Date('2026-05-01T08:00:00.000Z');
const T_COMPLETE = new Date('2026-05-01T09:00:00.000Z');

/** Stored timestamps consistent with each status. */
const CURRENT: Record<RunStatus, RunTimestamps> = {
  not_started: { started_at: null, completed_at: null, archived_at: null },
  in_progress: { started_at: T_START, completed_at: null, archived_at: null },
  completed: { started_at: T_START, completed_at: T_COMPLETE, archived_at: null },
  archived: { started_at: T_START, completed_at: T_COMPLETE, archived_at: NOW },
};

function decide(overrides: Partial<RunTransitionInput> & { from: RunStatus }): RunTransitionResult {
  return decideRunTransition({
    role: 'lead',
    itemsInProgress: 0,
    explicitTimestamps: {},
    current: CURRENT[overrides.from],
    now: NOW,
    ...overrides,
  });
}

type Expected =
  | 'ok'
  | 'invalid_status_transition'
  | 'insufficient_project_role'
  | 'run_archived'
  | 'run_items_in_progress'
  | 'validation_error';

describe('status helpers', () => {
  it.each([
    ['not_started', true],
    ['archived', true],
    ['done', false],
    [3, false],
  ])('isRunStatus(%p) = %s', (value, expected) => {
    expect(isRunStatus(value)).toBe(expected);
  });

  it.each<[RunStatus | null | undefined, ProjectRole]>([
    [undefined, 'tester'],
    [null, 'tester'],
    ['not_started', 'tester'],
    ['in_progress', 'tester'],
    ['completed', 'tester'],
    ['archived', 'lead'],
  ])('requiredRoleForRunPatch(%p) = %s', (to, expected) => {
    expect(requiredRoleForRunPatch(to)).toBe(expected);
  });
});

describe('decideRunTransition: every (from, to, role)', () => {
  // 4 × 4 × 3 = 48 rows, written out so that the table (not the code) is the specification.
  const table: Array<[RunStatus, RunStatus, ProjectRole, Expected]> = [
    ['not_started', 'not_started', 'viewer', 'insufficient_project_role'],
    ['not_started', 'not_started', 'tester', 'invalid_status_transition'],
    ['not_started', 'not_started', 'lead', 'invalid_status_transition'],
    ['not_started', 'in_progress', 'viewer', 'insufficient_project_role'],
    ['not_started', 'in_progress', 'tester', 'ok'],
    ['not_started', 'in_progress', 'lead', 'ok'],
    ['not_started', 'completed', 'viewer', 'insufficient_project_role'],
    ['not_started', 'completed', 'tester', 'invalid_status_transition'],
    ['not_started', 'completed', 'lead', 'invalid_status_transition'],
    ['not_started', 'archived', 'viewer', 'insufficient_project_role'],
    ['not_started', 'archived', 'tester', 'insufficient_project_role'],
    ['not_started', 'archived', 'lead', 'invalid_status_transition'],

    ['in_progress', 'not_started', 'viewer', 'insufficient_project_role'],
    ['in_progress', 'not_started', 'tester', 'invalid_status_transition'],
    ['in_progress', 'not_started', 'lead', 'invalid_status_transition'],
    ['in_progress', 'in_progress', 'viewer', 'insufficient_project_role'],
    ['in_progress', 'in_progress', 'tester', 'invalid_status_transition'],
    ['in_progress', 'in_progress', 'lead', 'invalid_status_transition'],
    ['in_progress', 'completed', 'viewer', 'insufficient_project_role'],
    ['in_progress', 'completed', 'tester', 'ok'],
    ['in_progress', 'completed', 'lead', 'ok'],
    ['in_progress', 'archived', 'viewer', 'insufficient_project_role'],
    ['in_progress', 'archived', 'tester', 'insufficient_project_role'],
    ['in_progress', 'archived', 'lead', 'invalid_status_transition'],

    ['completed', 'not_started', 'viewer', 'insufficient_project_role'],
    ['completed', 'not_started', 'tester', 'invalid_status_transition'],
    ['completed', 'not_started', 'lead', 'invalid_status_transition'],
    ['completed', 'in_progress', 'viewer', 'insufficient_project_role'],
    ['completed', 'in_progress', 'tester', 'invalid_status_transition'],
    ['completed', 'in_progress', 'lead', 'invalid_status_transition'],
    ['completed', 'completed', 'viewer', 'insufficient_project_role'],
    ['completed', 'completed', 'tester', 'invalid_status_transition'],
    ['completed', 'completed', 'lead', 'invalid_status_transition'],
    ['completed', 'archived', 'viewer', 'insufficient_project_role'],
    ['completed', 'archived', 'tester', 'insufficient_project_role'],
    ['completed', 'archived', 'lead', 'ok'],

    ['archived', 'not_started', 'viewer', 'insufficient_project_role'],
    ['archived', 'not_started', 'tester', 'invalid_status_transition'],
    ['archived', 'not_started', 'lead', 'invalid_status_transition'],
    ['archived', 'in_progress', 'viewer', 'insufficient_project_role'],
    ['archived', 'in_progress', 'tester', 'invalid_status_transition'],
    ['archived', 'in_progress', 'lead', 'invalid_status_transition'],
    ['archived', 'completed', 'viewer', 'insufficient_project_role'],
    ['archived', 'completed', 'tester', 'invalid_status_transition'],
    ['archived', 'completed', 'lead', 'invalid_status_transition'],
    ['archived', 'archived', 'viewer', 'insufficient_project_role'],
    ['archived', 'archived', 'tester', 'insufficient_project_role'],
    ['archived', 'archived', 'lead', 'invalid_status_transition'],
  ];

  it('covers all 48 combinations exactly once', () => {
    const keys = new Set(table.map(([f, t, r]) => `${f}|${t}|${r}`));
    expect(keys.size).toBe(RUN_STATUSES.length * RUN_STATUSES.length * PROJECT_ROLES.length);
  });

  it.each(table)('%s → %s as %s: %s', (from, to, role, expected) => {
    const result = decide({ from, to, role });
    if (expected === 'ok') {
      expect(result).toMatchObject({ ok: true, status: to, changed: true });
    } else {
      expect(result).toMatchObject({ ok: false, code: expected });
    }
  });
});

describe('decideRunTransition: PATCH without a status change', () => {
  it.each<[RunStatus, ProjectRole, Expected]>([
    ['not_started', 'viewer', 'insufficient_project_role'],
    ['not_started', 'tester', 'ok'],
    ['not_started', 'lead', 'ok'],
    ['in_progress', 'viewer', 'insufficient_project_role'],
    ['in_progress', 'tester', 'ok'],
    ['in_progress', 'lead', 'ok'],
    ['completed', 'viewer', 'insufficient_project_role'],
    ['completed', 'tester', 'ok'],
    ['completed', 'lead', 'ok'],
    ['archived', 'viewer', 'insufficient_project_role'],
    ['archived', 'tester', 'run_archived'],
    ['archived', 'lead', 'run_archived'],
  ])('from %s as %s: %s', (from, role, expected) => {
    for (const to of [undefined, null]) {
      const result = decide({ from, to, role });
      if (expected === 'ok') {
        expect(result).toEqual({ ok: true, status: from, changed: false, timestamps: {} });
      } else {
        expect(result).toMatchObject({ ok: false, code: expected });
      }
    }
  });
});

describe('decideRunTransition: details', () => {
  it.each<[RunStatus, RunStatus, string]>([
    ['in_progress', 'in_progress', 'in_progress is allowed only from not_started'],
    ['completed', 'in_progress', 'in_progress is allowed only from not_started'],
    ['not_started', 'completed', 'completed is allowed only from in_progress'],
    ['completed', 'completed', 'completed is allowed only from in_progress'],
    ['not_started', 'archived', 'archived is allowed only from completed'],
    ['in_progress', 'archived', 'archived is allowed only from completed'],
    ['in_progress', 'not_started', 'not_started is the initial status'],
    ['archived', 'not_started', 'not_started is the initial status'],
    ['archived', 'in_progress', 'in_progress is allowed only from not_started'],
    ['archived', 'completed', 'completed is allowed only from in_progress'],
    ['archived', 'archived', 'archived is allowed only from completed'],
  ])('%s → %s names the allowed source: "%s"', (from, to, text) => {
    const result = decide({ from, to, role: 'lead' });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('invalid_status_transition');
      expect(result.detail).toContain(text);
      expect(result.detail).toContain(`current status: ${from}`);
      expect(result.errors).toBeUndefined();
    }
  });

  it.each<[RunStatus | undefined, ProjectRole, string]>([
    ['archived', 'tester', 'Required role is at least lead'],
    ['in_progress', 'viewer', 'Required role is at least tester'],
    [undefined, 'viewer', 'Required role is at least tester'],
  ])('role detail for target %p as %s', (to, role, detail) => {
    const from: RunStatus = to === 'in_progress' ? 'not_started' : 'completed';
    expect(decide({ from, to, role })).toEqual({
      ok: false,
      code: 'insufficient_project_role',
      detail,
    });
  });

  it('names the archived state when the run is read-only', () => {
    const result = decide({ from: 'archived', to: undefined, role: 'lead' });
    expect(result).toMatchObject({ ok: false, code: 'run_archived' });
    if (!result.ok) expect(result.detail).toMatch(/archived/);
  });
});

describe('decideRunTransition: run items in progress', () => {
  it.each<[number, Expected, string | null]>([
    [0, 'ok', null],
    [1, 'run_items_in_progress', '1 run item is still in_progress'],
    [2, 'run_items_in_progress', '2 run items are still in_progress'],
    [150, 'run_items_in_progress', '150 run items are still in_progress'],
  ])('completing with %d in progress: %s', (count, expected, text) => {
    const result = decide({ from: 'in_progress', to: 'completed', itemsInProgress: count });
    if (expected === 'ok') {
      expect(result.ok).toBe(true);
    } else {
      expect(result).toMatchObject({ ok: false, code: expected });
      if (!result.ok && text) expect(result.detail).toContain(text);
    }
  });

  it.each<[RunStatus, RunStatus]>([
    ['not_started', 'in_progress'],
    ['completed', 'archived'],
  ])('items in progress do not block %s → %s', (from, to) => {
    expect(decide({ from, to, itemsInProgress: 5 }).ok).toBe(true);
  });

  it('the blocked transition itself is reported before items in progress', () => {
    expect(decide({ from: 'not_started', to: 'completed', itemsInProgress: 3 })).toMatchObject({
      code: 'invalid_status_transition',
    });
  });
});

describe('decideRunTransition: timestamps', () => {
  const EXPLICIT = new Date('2026-05-01T09:30:00.000Z');

  it.each<[RunStatus, RunStatus, 'started_at' | 'completed_at' | 'archived_at']>([
    ['not_started', 'in_progress', 'started_at'],
    ['in_progress', 'completed', 'completed_at'],
    ['completed', 'archived', 'archived_at'],
  ])('%s → %s sets %s to now when omitted', (from, to, field) => {
    expect(decide({ from, to })).toEqual({
      ok: true,
      status: to,
      changed: true,
      timestamps: { [field]: NOW },
    });
  });

  it.each<[RunStatus, RunStatus, 'started_at' | 'completed_at' | 'archived_at']>([
    ['not_started', 'in_progress', 'started_at'],
    ['in_progress', 'completed', 'completed_at'],
    ['completed', 'archived', 'archived_at'],
  ])('%s → %s uses an explicit %s', (from, to, field) => {
    expect(decide({ from, to, explicitTimestamps: { [field]: EXPLICIT } })).toEqual({
      ok: true,
      status: to,
      changed: true,
      timestamps: { [field]: EXPLICIT },
    });
  });

  it.each<[RunStatus, RunStatus, 'started_at' | 'completed_at' | 'archived_at']>([
    ['not_started', 'in_progress', 'started_at'],
    ['in_progress', 'completed', 'completed_at'],
    ['completed', 'archived', 'archived_at'],
  ])('%s → %s treats an explicit null %s as omitted', (from, to, field) => {
    const result = decide({ from, to, explicitTimestamps: { [field]: null } });
    expect(result).toMatchObject({ ok: true, timestamps: { [field]: NOW } });
  });

  it('an explicit started_at has no lower bound (run recorded after the fact)', () => {
    const early = new Date('2020-01-01T00:00:00.000Z');
    expect(
      decide({ from: 'not_started', to: 'in_progress', explicitTimestamps: { started_at: early } }),
    ).toMatchObject({ ok: true, timestamps: { started_at: early } });
  });

  type Field = 'started_at' | 'completed_at' | 'archived_at';
  it.each<[string, RunStatus | undefined, Partial<Record<Field, Date | null>>, string[]]>([
    ['started_at without status', undefined, { started_at: EXPLICIT }, ['started_at']],
    ['completed_at without status', undefined, { completed_at: EXPLICIT }, ['completed_at']],
    ['archived_at without status', undefined, { archived_at: EXPLICIT }, ['archived_at']],
    ['completed_at with in_progress', 'in_progress', { completed_at: EXPLICIT }, ['completed_at']],
    ['archived_at with in_progress', 'in_progress', { archived_at: EXPLICIT }, ['archived_at']],
    ['started_at with completed', 'completed', { started_at: EXPLICIT }, ['started_at']],
    ['archived_at with completed', 'completed', { archived_at: EXPLICIT }, ['archived_at']],
    ['started_at with archived', 'archived', { started_at: EXPLICIT }, ['started_at']],
    ['completed_at with archived', 'archived', { completed_at: EXPLICIT }, ['completed_at']],
    ['started_at with not_started', 'not_started', { started_at: EXPLICIT }, ['started_at']],
    [
      'all three without status',
      undefined,
      { started_at: EXPLICIT, completed_at: EXPLICIT, archived_at: EXPLICIT },
      ['started_at', 'completed_at', 'archived_at'],
    ],
    [
      'matching plus extra one',
      'completed',
      { completed_at: EXPLICIT, archived_at: EXPLICIT },
      ['archived_at'],
    ],
    ['an invalid date', 'in_progress', { started_at: new Date('nope') }, ['started_at']],
  ])('rejects %s with validation_error', (_label, to, explicitTimestamps, fields) => {
    const from: RunStatus =
      to === 'in_progress' ? 'not_started' : to === 'archived' ? 'completed' : 'in_progress';
    const result = decide({ from, to, explicitTimestamps });
    expect(result).toMatchObject({ ok: false, code: 'validation_error' });
    if (!result.ok) {
      expect(Object.keys(result.errors ?? {}).sort()).toEqual([...fields].sort());
      for (const field of fields) expect(result.errors?.[field]?.[0]).toContain(field);
    }
  });

  it('null timestamps without a status change are ignored', () => {
    expect(
      decide({
        from: 'in_progress',
        explicitTimestamps: { started_at: null, completed_at: null, archived_at: null },
      }),
    ).toEqual({ ok: true, status: 'in_progress', changed: false, timestamps: {} });
  });

  it.each<[string, RunStatus, RunStatus, Partial<Record<Field, Date>>, RunTimestamps, Expected]>([
    [
      'completed_at before started_at',
      'in_progress',
      'completed',
      { completed_at: new Date('2026-05-01T07:59:59.999Z') },
      CURRENT.in_progress,
      'validation_error',
    ],
    [
      'completed_at equal to started_at',
      'in_progress',
      'completed',
      { completed_at: T_START },
      CURRENT.in_progress,
      'ok',
    ],
    [
      'archived_at before completed_at',
      'completed',
      'archived',
      { archived_at: new Date('2026-05-01T08:30:00.000Z') },
      CURRENT.completed,
      'validation_error',
    ],
    [
      'archived_at equal to completed_at',
      'completed',
      'archived',
      { archived_at: T_COMPLETE },
      CURRENT.completed,
      'ok',
    ],
    [
      'archived_at before started_at when completed_at is missing',
      'completed',
      'archived',
      { archived_at: new Date('2026-05-01T07:00:00.000Z') },
      { started_at: T_START, completed_at: null, archived_at: null },
      'validation_error',
    ],
    [
      'completed_at with no started_at stored',
      'in_progress',
      'completed',
      { completed_at: new Date('2000-01-01T00:00:00.000Z') },
      { started_at: null, completed_at: null, archived_at: null },
      'ok',
    ],
  ])('%s (%s → %s)', (_label, from, to, explicitTimestamps, current, expected) => {
    const result = decide({ from, to, explicitTimestamps, current });
    if (expected === 'ok') {
      expect(result.ok).toBe(true);
    } else {
      expect(result).toMatchObject({ ok: false, code: expected });
      if (!result.ok) {
        const field = Object.keys(explicitTimestamps)[0];
        expect(Object.keys(result.errors ?? {})).toEqual([field]);
        expect(result.detail).toMatch(/must not be earlier than/);
      }
    }
  });

  it('clamps an automatic timestamp to the preceding one when that lies in the future', () => {
    const future = new Date('2026-05-02T00:00:00.000Z');
    const result = decide({
      from: 'in_progress',
      to: 'completed',
      current: { started_at: future, completed_at: null, archived_at: null },
    });
    expect(result).toMatchObject({ ok: true, timestamps: { completed_at: future } });
  });
});

describe('decideRunTransition: precedence of checks', () => {
  const E = new Date('2026-05-01T09:30:00.000Z');
  it.each<[string, Partial<RunTransitionInput> & { from: RunStatus }, Expected]>([
    [
      'misplaced timestamp beats role',
      { from: 'completed', to: 'archived', role: 'viewer', explicitTimestamps: { started_at: E } },
      'validation_error',
    ],
    [
      'misplaced timestamp beats run_archived',
      { from: 'archived', role: 'lead', explicitTimestamps: { started_at: E } },
      'validation_error',
    ],
    [
      'role beats the transition out of archived',
      { from: 'archived', to: 'archived', role: 'tester' },
      'insufficient_project_role',
    ],
    [
      'role beats run_archived',
      { from: 'archived', to: null, role: 'viewer' },
      'insufficient_project_role',
    ],
    [
      'role beats invalid transition',
      { from: 'not_started', to: 'archived', role: 'tester' },
      'insufficient_project_role',
    ],
    [
      'role beats items in progress',
      { from: 'in_progress', to: 'completed', role: 'viewer', itemsInProgress: 2 },
      'insufficient_project_role',
    ],
    [
      'a status change out of archived is an invalid transition, not run_archived',
      { from: 'archived', to: 'in_progress', role: 'lead' },
      'invalid_status_transition',
    ],
    [
      'items in progress beat timestamp order',
      {
        from: 'in_progress',
        to: 'completed',
        itemsInProgress: 1,
        explicitTimestamps: { completed_at: new Date('2000-01-01T00:00:00.000Z') },
      },
      'run_items_in_progress',
    ],
    [
      'invalid transition beats timestamp order',
      {
        from: 'not_started',
        to: 'completed',
        explicitTimestamps: { completed_at: new Date('2000-01-01T00:00:00.000Z') },
      },
      'invalid_status_transition',
    ],
  ])('%s', (_label, input, expected) => {
    expect(decide(input)).toMatchObject({ ok: false, code: expected });
  });
});

describe('checkRunTimestampFields', () => {
  it('passes when nothing is supplied', () => {
    expect(checkRunTimestampFields(undefined, {})).toBeNull();
    expect(checkRunTimestampFields('completed', { completed_at: null })).toBeNull();
  });

  it('passes when the timestamp matches the target', () => {
    expect(checkRunTimestampFields('archived', { archived_at: NOW })).toBeNull();
  });

  it('returns a field map otherwise', () => {
    expect(checkRunTimestampFields(null, { completed_at: NOW })).toEqual({
      ok: false,
      code: 'validation_error',
      detail: 'Request contains invalid fields',
      errors: {
        completed_at: [
          'completed_at is accepted only together with the status change to completed',
        ],
      },
    });
  });
});
