import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Milestones, test runs, run items ("run cases"), their rows and their status history
 * (api.md §2.1, CONTRACT §5, reference runs-imports-plans.md §1–3 and §7).
 *
 * A run keeps its item counters by status in integer columns (`count_<status>`), recomputed in the
 * same transaction whenever items change, so reading a run or a page of runs is one query.
 */
export class TestRuns1763700000400 implements MigrationInterface {
  name = 'TestRuns1763700000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE milestones (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        description text,
        status varchar(16) NOT NULL DEFAULT 'planned',
        start_date date,
        target_date date,
        completed_at timestamptz,
        owner_id uuid,
        release_label varchar(128),
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_milestones PRIMARY KEY (id),
        CONSTRAINT ck_milestones_status CHECK (status IN ('planned', 'active', 'completed', 'archived')),
        CONSTRAINT ck_milestones_dates CHECK (start_date IS NULL OR target_date IS NULL OR start_date <= target_date),
        CONSTRAINT fk_milestones_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_milestones_owner FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL,
        CONSTRAINT fk_milestones_created_by FOREIGN KEY (created_by) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX ix_milestones_project_target ON milestones (project_id, target_date, created_at, id)`,
    );
    await q.query(`CREATE INDEX ix_milestones_project_status ON milestones (project_id, status)`);
    await q.query(`CREATE INDEX ix_milestones_owner ON milestones (owner_id)`);
    await q.query(`CREATE INDEX ix_milestones_created_by ON milestones (created_by)`);

    await q.query(`
      CREATE TABLE test_runs (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        description text,
        environment_id uuid,
        environment_name text,
        environment_revision_id uuid,
        environment_revision_number integer,
        environment_snapshot_hash varchar(200),
        environment_snapshot jsonb NOT NULL DEFAULT '{}'::jsonb,
        milestone_id uuid,
        build varchar(255),
        assignee_id uuid,
        created_by uuid NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'not_started',
        started_at timestamptz,
        completed_at timestamptz,
        archived_at timestamptz,
        planned_item_count integer NOT NULL DEFAULT 0,
        count_untested integer NOT NULL DEFAULT 0,
        count_in_progress integer NOT NULL DEFAULT 0,
        count_passed integer NOT NULL DEFAULT 0,
        count_error integer NOT NULL DEFAULT 0,
        count_failure integer NOT NULL DEFAULT 0,
        count_blocked integer NOT NULL DEFAULT 0,
        count_skipped integer NOT NULL DEFAULT 0,
        count_xfailed integer NOT NULL DEFAULT 0,
        count_xpassed integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_test_runs PRIMARY KEY (id),
        CONSTRAINT ck_test_runs_status CHECK (status IN ('not_started', 'in_progress', 'completed', 'archived')),
        CONSTRAINT ck_test_runs_planned_item_count CHECK (planned_item_count >= 0),
        CONSTRAINT fk_test_runs_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_runs_environment FOREIGN KEY (environment_id) REFERENCES environments(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_runs_environment_revision FOREIGN KEY (environment_revision_id) REFERENCES environment_revisions(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_runs_milestone FOREIGN KEY (milestone_id) REFERENCES milestones(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_runs_assignee FOREIGN KEY (assignee_id) REFERENCES users(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_runs_created_by FOREIGN KEY (created_by) REFERENCES users(id)
      )`);
    // Default list order and the created_from/created_to range.
    await q.query(
      `CREATE INDEX ix_test_runs_project_created ON test_runs (project_id, created_at, id)`,
    );
    // Sort keys (ties broken by id).
    await q.query(
      `CREATE INDEX ix_test_runs_project_name ON test_runs (project_id, lower(name), id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_runs_project_status ON test_runs (project_id, status, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_runs_project_build ON test_runs (project_id, lower(coalesce(build, '')), id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_runs_project_environment_name ON test_runs (project_id, lower(coalesce(environment_name, '')), id)`,
    );
    // Filters.
    await q.query(`CREATE INDEX ix_test_runs_environment ON test_runs (environment_id)`);
    await q.query(`CREATE INDEX ix_test_runs_milestone ON test_runs (milestone_id)`);
    await q.query(
      `CREATE INDEX ix_test_runs_project_created_by ON test_runs (project_id, created_by)`,
    );
    await q.query(`CREATE INDEX ix_test_runs_assignee ON test_runs (assignee_id)`);
    await q.query(
      `CREATE INDEX ix_test_runs_environment_revision ON test_runs (environment_revision_id)`,
    );
    await q.query(`CREATE INDEX ix_test_runs_created_by ON test_runs (created_by)`);
    // Substring search (ILIKE) over name, build and environment name.
    await q.query(`CREATE INDEX ix_test_runs_name_trgm ON test_runs USING gin (name gin_trgm_ops)`);
    await q.query(
      `CREATE INDEX ix_test_runs_build_trgm ON test_runs USING gin (build gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX ix_test_runs_environment_name_trgm ON test_runs USING gin (environment_name gin_trgm_ops)`,
    );

    await q.query(`
      CREATE TABLE run_items (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        test_run_id uuid NOT NULL,
        test_case_id uuid,
        assignee_id uuid,
        status varchar(16) NOT NULL DEFAULT 'untested',
        rows_total integer NOT NULL DEFAULT 0,
        rows_passed integer NOT NULL DEFAULT 0,
        rows_failed integer NOT NULL DEFAULT 0,
        comment text,
        test_case_key varchar(64),
        test_case_title text,
        test_case_priority varchar(32),
        test_case_tags text[] NOT NULL DEFAULT '{}',
        suite_id uuid,
        suite_name text,
        dataset_snapshot jsonb NOT NULL DEFAULT '{}'::jsonb,
        last_executed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_run_items PRIMARY KEY (id),
        CONSTRAINT uq_run_items_run_case UNIQUE (test_run_id, test_case_id),
        CONSTRAINT ck_run_items_status CHECK (status IN ('untested', 'in_progress', 'passed', 'error', 'failure', 'blocked', 'skipped', 'xfailed', 'xpassed')),
        CONSTRAINT fk_run_items_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_run_items_test_run FOREIGN KEY (test_run_id) REFERENCES test_runs(id) ON DELETE CASCADE,
        CONSTRAINT fk_run_items_test_case FOREIGN KEY (test_case_id) REFERENCES test_cases(id) ON DELETE SET NULL,
        CONSTRAINT fk_run_items_assignee FOREIGN KEY (assignee_id) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE INDEX ix_run_items_run_status ON run_items (test_run_id, status)`);
    await q.query(
      `CREATE INDEX ix_run_items_run_last_executed ON run_items (test_run_id, last_executed_at, id)`,
    );
    await q.query(`CREATE INDEX ix_run_items_test_case ON run_items (test_case_id, created_at)`);
    await q.query(`CREATE INDEX ix_run_items_project ON run_items (project_id)`);
    await q.query(`CREATE INDEX ix_run_items_assignee ON run_items (assignee_id)`);

    await q.query(`
      CREATE TABLE run_item_rows (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        run_item_id uuid NOT NULL,
        parent_row_id uuid,
        row_order integer NOT NULL,
        scenario_label text NOT NULL,
        row_snapshot jsonb NOT NULL DEFAULT '{}'::jsonb,
        status varchar(16) NOT NULL DEFAULT 'untested',
        comment text,
        defect_ids text[] NOT NULL DEFAULT '{}',
        actual_result text,
        system_out text,
        system_err text,
        executed_by_id uuid,
        execution_count integer NOT NULL DEFAULT 0,
        last_executed_at timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        duration_ms bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_run_item_rows PRIMARY KEY (id),
        CONSTRAINT uq_run_item_rows_order UNIQUE (run_item_id, row_order),
        CONSTRAINT ck_run_item_rows_status CHECK (status IN ('untested', 'in_progress', 'passed', 'error', 'failure', 'blocked', 'skipped', 'xfailed', 'xpassed')),
        CONSTRAINT ck_run_item_rows_duration CHECK (duration_ms IS NULL OR duration_ms >= 0),
        CONSTRAINT fk_run_item_rows_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_run_item_rows_run_item FOREIGN KEY (run_item_id) REFERENCES run_items(id) ON DELETE CASCADE,
        CONSTRAINT fk_run_item_rows_parent FOREIGN KEY (parent_row_id) REFERENCES run_item_rows(id) ON DELETE SET NULL,
        CONSTRAINT fk_run_item_rows_executed_by FOREIGN KEY (executed_by_id) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX ix_run_item_rows_item_status ON run_item_rows (run_item_id, status)`,
    );
    await q.query(
      `CREATE INDEX ix_run_item_rows_in_progress ON run_item_rows (run_item_id) WHERE status = 'in_progress'`,
    );
    await q.query(`CREATE INDEX ix_run_item_rows_parent ON run_item_rows (parent_row_id)`);
    await q.query(`CREATE INDEX ix_run_item_rows_project ON run_item_rows (project_id)`);
    await q.query(`CREATE INDEX ix_run_item_rows_executed_by ON run_item_rows (executed_by_id)`);

    await q.query(`
      CREATE TABLE run_item_history (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        run_item_id uuid NOT NULL,
        run_item_row_id uuid,
        from_status varchar(16),
        to_status varchar(16) NOT NULL,
        comment text,
        defect_ids text[] NOT NULL DEFAULT '{}',
        actual_result text,
        system_out text,
        system_err text,
        executed_by_id uuid,
        started_at timestamptz,
        finished_at timestamptz,
        duration_ms bigint,
        changed_by_id uuid,
        changed_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_run_item_history PRIMARY KEY (id),
        CONSTRAINT fk_run_item_history_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_run_item_history_run_item FOREIGN KEY (run_item_id) REFERENCES run_items(id) ON DELETE CASCADE,
        CONSTRAINT fk_run_item_history_row FOREIGN KEY (run_item_row_id) REFERENCES run_item_rows(id) ON DELETE SET NULL,
        CONSTRAINT fk_run_item_history_executed_by FOREIGN KEY (executed_by_id) REFERENCES users(id) ON DELETE SET NULL,
        CONSTRAINT fk_run_item_history_changed_by FOREIGN KEY (changed_by_id) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX ix_run_item_history_item ON run_item_history (run_item_id, changed_at, id)`,
    );
    await q.query(`CREATE INDEX ix_run_item_history_row ON run_item_history (run_item_row_id)`);
    await q.query(`CREATE INDEX ix_run_item_history_project ON run_item_history (project_id)`);
    await q.query(
      `CREATE INDEX ix_run_item_history_executed_by ON run_item_history (executed_by_id)`,
    );
    await q.query(
      `CREATE INDEX ix_run_item_history_changed_by ON run_item_history (changed_by_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE run_item_history`);
    await q.query(`DROP TABLE run_item_rows`);
    await q.query(`DROP TABLE run_items`);
    await q.query(`DROP TABLE test_runs`);
    await q.query(`DROP TABLE milestones`);
  }
}
