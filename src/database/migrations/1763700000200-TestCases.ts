import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Test cases, suites, per-project counters (case keys), component coverages of cases, datasets with
 * immutable revisions, and dataset bindings of cases (CONTRACT §7, §10; reference
 * environments-datasets-cases.md §4–6, products-auth-errors.md §9.1).
 *
 * Rows that point at a case, a dataset or a component of the same project use composite foreign
 * keys on (id, project_id), so they can never cross projects.
 */
export class TestCases1763700000200 implements MigrationInterface {
  name = 'TestCases1763700000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE project_counters (
        project_id uuid NOT NULL,
        name varchar(64) NOT NULL,
        value integer NOT NULL DEFAULT 0,
        CONSTRAINT pk_project_counters PRIMARY KEY (project_id, name),
        CONSTRAINT ck_project_counters_value CHECK (value >= 0),
        CONSTRAINT fk_project_counters_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE suites (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        parent_id uuid,
        name varchar(255) NOT NULL,
        description text,
        position integer NOT NULL DEFAULT 100,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_suites PRIMARY KEY (id),
        CONSTRAINT uq_suites_id_project UNIQUE (id, project_id),
        CONSTRAINT ck_suites_not_own_parent CHECK (parent_id IS NULL OR parent_id <> id),
        CONSTRAINT fk_suites_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_suites_parent FOREIGN KEY (parent_id) REFERENCES suites(id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE INDEX ix_suites_parent ON suites (parent_id)`);
    await q.query(`CREATE INDEX ix_suites_project_created ON suites (project_id, created_at, id)`);
    await q.query(`CREATE INDEX ix_suites_project_updated ON suites (project_id, updated_at, id)`);
    await q.query(`CREATE INDEX ix_suites_project_position ON suites (project_id, position, id)`);
    await q.query(`CREATE INDEX ix_suites_project_name ON suites (project_id, lower(name), id)`);
    await q.query(`CREATE INDEX ix_suites_name_trgm ON suites USING gin (name gin_trgm_ops)`);

    // Lower-cased tags for the case-insensitive `tag` filter (GIN-indexable, so IMMUTABLE).
    await q.query(`
      CREATE FUNCTION test_cases_lower_tags(tags text[]) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT coalesce(array_agg(lower(t)), '{}') FROM unnest(tags) AS t $$`);

    await q.query(`
      CREATE TABLE test_cases (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        key varchar(32) NOT NULL,
        key_number integer NOT NULL,
        title varchar(500) NOT NULL,
        description text,
        preconditions text,
        steps jsonb NOT NULL DEFAULT '[]',
        priority varchar(16),
        status varchar(16) NOT NULL DEFAULT 'active',
        test_case_type varchar(16) NOT NULL DEFAULT 'manual',
        automation_id varchar(255),
        suite_id uuid,
        owner_id uuid,
        primary_product_id uuid,
        tags text[] NOT NULL DEFAULT '{}',
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_test_cases PRIMARY KEY (id),
        CONSTRAINT uq_test_cases_id_project UNIQUE (id, project_id),
        CONSTRAINT uq_test_cases_project_key_number UNIQUE (project_id, key_number),
        CONSTRAINT ck_test_cases_status CHECK (status IN ('draft', 'active', 'archived')),
        CONSTRAINT ck_test_cases_priority CHECK (priority IS NULL OR priority IN ('low', 'medium', 'high', 'critical')),
        CONSTRAINT ck_test_cases_type CHECK (test_case_type IN ('manual', 'automated')),
        CONSTRAINT ck_test_cases_steps CHECK (jsonb_typeof(steps) = 'array'),
        CONSTRAINT ck_test_cases_key_number CHECK (key_number > 0),
        CONSTRAINT fk_test_cases_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_cases_suite FOREIGN KEY (suite_id) REFERENCES suites(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_cases_owner FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_cases_primary_product FOREIGN KEY (primary_product_id) REFERENCES products(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_cases_created_by FOREIGN KEY (created_by) REFERENCES users(id)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX uq_test_cases_project_automation_id ON test_cases (project_id, automation_id) WHERE automation_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_project_created ON test_cases (project_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_project_updated ON test_cases (project_id, updated_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_project_title ON test_cases (project_id, lower(title), id)`,
    );
    await q.query(`CREATE INDEX ix_test_cases_project_status ON test_cases (project_id, status)`);
    await q.query(
      `CREATE INDEX ix_test_cases_project_priority ON test_cases (project_id, priority)`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_project_type ON test_cases (project_id, test_case_type)`,
    );
    await q.query(`CREATE INDEX ix_test_cases_suite ON test_cases (suite_id)`);
    await q.query(`CREATE INDEX ix_test_cases_owner ON test_cases (owner_id)`);
    await q.query(`CREATE INDEX ix_test_cases_primary_product ON test_cases (primary_product_id)`);
    await q.query(`CREATE INDEX ix_test_cases_created_by ON test_cases (created_by)`);
    await q.query(
      `CREATE INDEX ix_test_cases_tags ON test_cases USING gin (test_cases_lower_tags(tags))`,
    );
    await q.query(
      `CREATE INDEX ix_test_cases_title_trgm ON test_cases USING gin (title gin_trgm_ops)`,
    );
    await q.query(`CREATE INDEX ix_test_cases_key_trgm ON test_cases USING gin (key gin_trgm_ops)`);
    await q.query(
      `CREATE INDEX ix_test_cases_automation_id_trgm ON test_cases USING gin (automation_id gin_trgm_ops)`,
    );

    await q.query(`
      CREATE TABLE test_case_component_coverages (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        test_case_id uuid NOT NULL,
        component_id uuid NOT NULL,
        coverage_type varchar(16) NOT NULL DEFAULT 'direct',
        coverage_strength varchar(16) NOT NULL DEFAULT 'regression',
        is_mandatory_for_release boolean NOT NULL DEFAULT false,
        notes text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_test_case_component_coverages PRIMARY KEY (id),
        CONSTRAINT uq_test_case_component_coverages_case_component UNIQUE (test_case_id, component_id),
        CONSTRAINT ck_test_case_component_coverages_type CHECK (coverage_type IN ('direct', 'indirect', 'integration', 'e2e')),
        CONSTRAINT ck_test_case_component_coverages_strength CHECK (coverage_strength IN ('smoke', 'regression', 'deep')),
        CONSTRAINT fk_test_case_component_coverages_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_case_component_coverages_case FOREIGN KEY (test_case_id, project_id)
          REFERENCES test_cases(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_test_case_component_coverages_component FOREIGN KEY (component_id, project_id)
          REFERENCES components(id, project_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_test_case_component_coverages_component ON test_case_component_coverages (component_id, test_case_id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_case_component_coverages_project ON test_case_component_coverages (project_id)`,
    );

    await q.query(`
      CREATE TABLE datasets (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        description text,
        status varchar(16) NOT NULL DEFAULT 'active',
        source_type varchar(32) NOT NULL DEFAULT 'manual',
        source_ref varchar(512),
        current_revision_number integer NOT NULL DEFAULT 0,
        current_revision_id uuid,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        archived_at timestamptz,
        CONSTRAINT pk_datasets PRIMARY KEY (id),
        CONSTRAINT uq_datasets_id_project UNIQUE (id, project_id),
        CONSTRAINT ck_datasets_status CHECK (status IN ('active', 'archived')),
        CONSTRAINT ck_datasets_source_type CHECK (source_type IN ('manual', 'pytest_parametrize', 'imported')),
        CONSTRAINT ck_datasets_current_revision_number CHECK (current_revision_number >= 0),
        CONSTRAINT fk_datasets_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_datasets_created_by FOREIGN KEY (created_by) REFERENCES users(id)
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_datasets_project_name ON datasets (project_id, name)`);
    // Name search is ILIKE (trigram index below); sorting by name uses lower(name).
    await q.query(
      `CREATE INDEX ix_datasets_project_lower_name ON datasets (project_id, lower(name), id)`,
    );
    await q.query(
      `CREATE INDEX ix_datasets_project_updated ON datasets (project_id, updated_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_datasets_project_created ON datasets (project_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_datasets_project_source_type ON datasets (project_id, source_type)`,
    );
    await q.query(`CREATE INDEX ix_datasets_project_status ON datasets (project_id, status)`);
    await q.query(`CREATE INDEX ix_datasets_created_by ON datasets (created_by)`);
    await q.query(`CREATE INDEX ix_datasets_name_trgm ON datasets USING gin (name gin_trgm_ops)`);
    await q.query(
      `CREATE INDEX ix_datasets_description_trgm ON datasets USING gin (description gin_trgm_ops)`,
    );

    await q.query(`
      CREATE TABLE dataset_revisions (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        dataset_id uuid NOT NULL,
        revision_number integer NOT NULL,
        rows_count integer NOT NULL DEFAULT 0,
        columns jsonb NOT NULL DEFAULT '[]',
        rows jsonb NOT NULL DEFAULT '[]',
        change_summary text,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_dataset_revisions PRIMARY KEY (id),
        CONSTRAINT uq_dataset_revisions_dataset_number UNIQUE (dataset_id, revision_number),
        CONSTRAINT ck_dataset_revisions_number CHECK (revision_number > 0),
        CONSTRAINT ck_dataset_revisions_columns CHECK (jsonb_typeof(columns) = 'array'),
        CONSTRAINT ck_dataset_revisions_rows CHECK (jsonb_typeof(rows) = 'array'),
        CONSTRAINT fk_dataset_revisions_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_dataset_revisions_dataset FOREIGN KEY (dataset_id, project_id)
          REFERENCES datasets(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_dataset_revisions_created_by FOREIGN KEY (created_by) REFERENCES users(id)
      )`);
    await q.query(`CREATE INDEX ix_dataset_revisions_project ON dataset_revisions (project_id)`);
    await q.query(`CREATE INDEX ix_dataset_revisions_created_by ON dataset_revisions (created_by)`);

    await q.query(`
      CREATE TABLE test_case_dataset_bindings (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        test_case_id uuid NOT NULL,
        dataset_id uuid NOT NULL,
        dataset_alias varchar(128) NOT NULL,
        mode varchar(16) NOT NULL DEFAULT 'follow_latest',
        pinned_revision_number integer,
        row_selection_type varchar(16) NOT NULL DEFAULT 'all',
        selected_row_keys text[] NOT NULL DEFAULT '{}',
        sort_order integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_test_case_dataset_bindings PRIMARY KEY (id),
        CONSTRAINT uq_test_case_dataset_bindings_case_dataset UNIQUE (test_case_id, dataset_id),
        CONSTRAINT uq_test_case_dataset_bindings_case_alias UNIQUE (test_case_id, dataset_alias),
        CONSTRAINT ck_test_case_dataset_bindings_mode CHECK (mode IN ('follow_latest', 'pin_revision')),
        CONSTRAINT ck_test_case_dataset_bindings_pin CHECK ((mode = 'pin_revision') = (pinned_revision_number IS NOT NULL)),
        CONSTRAINT ck_test_case_dataset_bindings_pin_positive CHECK (pinned_revision_number IS NULL OR pinned_revision_number > 0),
        CONSTRAINT ck_test_case_dataset_bindings_selection CHECK (row_selection_type IN ('all', 'subset')),
        CONSTRAINT ck_test_case_dataset_bindings_subset CHECK (
          (row_selection_type = 'subset') = (cardinality(selected_row_keys) > 0)),
        CONSTRAINT fk_test_case_dataset_bindings_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_case_dataset_bindings_case FOREIGN KEY (test_case_id, project_id)
          REFERENCES test_cases(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_test_case_dataset_bindings_dataset FOREIGN KEY (dataset_id, project_id)
          REFERENCES datasets(id, project_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_test_case_dataset_bindings_case_order ON test_case_dataset_bindings (test_case_id, sort_order, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_case_dataset_bindings_dataset ON test_case_dataset_bindings (dataset_id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_case_dataset_bindings_project ON test_case_dataset_bindings (project_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE test_case_dataset_bindings`);
    await q.query(`DROP TABLE dataset_revisions`);
    await q.query(`DROP TABLE datasets`);
    await q.query(`DROP TABLE test_case_component_coverages`);
    await q.query(`DROP TABLE test_cases`);
    await q.query(`DROP FUNCTION test_cases_lower_tags(text[])`);
    await q.query(`DROP TABLE suites`);
    await q.query(`DROP TABLE project_counters`);
  }
}
