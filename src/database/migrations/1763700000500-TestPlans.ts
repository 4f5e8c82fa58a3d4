import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Test plans: a saved scope (suites, explicit cases) with an optional milestone, from which runs are
 * created (CONTRACT §7; reference runs-imports-plans.md §6). Plan-suite and plan-case links use
 * composite foreign keys on (id, project_id), so a plan never points into another project.
 */
export class TestPlans1763700000500 implements MigrationInterface {
  name = 'TestPlans1763700000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE test_plans (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        description text,
        tags text[] NOT NULL DEFAULT '{}',
        generation_source varchar(32) NOT NULL DEFAULT 'manual',
        generation_config jsonb NOT NULL DEFAULT '{}',
        generation_summary jsonb NOT NULL DEFAULT '{}',
        milestone_id uuid,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_test_plans PRIMARY KEY (id),
        CONSTRAINT uq_test_plans_id_project UNIQUE (id, project_id),
        CONSTRAINT ck_test_plans_generation_source CHECK (generation_source IN ('manual', 'product_generated')),
        CONSTRAINT ck_test_plans_generation_config CHECK (jsonb_typeof(generation_config) = 'object'),
        CONSTRAINT ck_test_plans_generation_summary CHECK (jsonb_typeof(generation_summary) = 'object'),
        CONSTRAINT fk_test_plans_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_plans_milestone FOREIGN KEY (milestone_id) REFERENCES milestones(id) ON DELETE SET NULL,
        CONSTRAINT fk_test_plans_created_by FOREIGN KEY (created_by) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX ix_test_plans_project_created ON test_plans (project_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_plans_project_updated ON test_plans (project_id, updated_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_plans_project_name ON test_plans (project_id, lower(name), id)`,
    );
    await q.query(
      `CREATE INDEX ix_test_plans_project_source ON test_plans (project_id, generation_source)`,
    );
    await q.query(`CREATE INDEX ix_test_plans_milestone ON test_plans (milestone_id)`);
    await q.query(`CREATE INDEX ix_test_plans_created_by ON test_plans (created_by)`);
    await q.query(
      `CREATE INDEX ix_test_plans_tags ON test_plans USING gin (test_cases_lower_tags(tags))`,
    );
    await q.query(
      `CREATE INDEX ix_test_plans_name_trgm ON test_plans USING gin (name gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX ix_test_plans_description_trgm ON test_plans USING gin (description gin_trgm_ops)`,
    );

    await q.query(`
      CREATE TABLE test_plan_suites (
        test_plan_id uuid NOT NULL,
        suite_id uuid NOT NULL,
        project_id uuid NOT NULL,
        position integer NOT NULL,
        CONSTRAINT pk_test_plan_suites PRIMARY KEY (test_plan_id, suite_id),
        CONSTRAINT fk_test_plan_suites_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_plan_suites_plan FOREIGN KEY (test_plan_id, project_id)
          REFERENCES test_plans(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_test_plan_suites_suite FOREIGN KEY (suite_id, project_id)
          REFERENCES suites(id, project_id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_test_plan_suites_suite ON test_plan_suites (suite_id)`);
    await q.query(`CREATE INDEX ix_test_plan_suites_project ON test_plan_suites (project_id)`);

    await q.query(`
      CREATE TABLE test_plan_cases (
        test_plan_id uuid NOT NULL,
        test_case_id uuid NOT NULL,
        project_id uuid NOT NULL,
        position integer NOT NULL,
        CONSTRAINT pk_test_plan_cases PRIMARY KEY (test_plan_id, test_case_id),
        CONSTRAINT fk_test_plan_cases_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_test_plan_cases_plan FOREIGN KEY (test_plan_id, project_id)
          REFERENCES test_plans(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_test_plan_cases_case FOREIGN KEY (test_case_id, project_id)
          REFERENCES test_cases(id, project_id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_test_plan_cases_case ON test_plan_cases (test_case_id)`);
    await q.query(`CREATE INDEX ix_test_plan_cases_project ON test_plan_cases (project_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE test_plan_cases`);
    await q.query(`DROP TABLE test_plan_suites`);
    await q.query(`DROP TABLE test_plans`);
  }
}
