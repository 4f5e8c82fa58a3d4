import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Environments and their immutable, numbered revisions (api.md §2.2–2.4, CONTRACT §8).
 *
 * `environments` mirrors the current revision's snapshot (name, kind, status, … topology) so lists
 * can filter and sort in SQL, and stores the counters and infra lists derived from that revision.
 * `current_revision_id` points at the revision with `is_current`; the foreign key is deferred so an
 * environment and its first revision can be inserted in one transaction in either order.
 * Derived entities and edges are kept per revision as jsonb arrays (free text, no width limits).
 */
export class Environments1763700000100 implements MigrationInterface {
  name = 'Environments1763700000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE environments (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        kind varchar(64) NOT NULL DEFAULT 'custom',
        status varchar(64) NOT NULL DEFAULT 'active',
        description text,
        tags text[] NOT NULL DEFAULT '{}',
        use_cases text[] NOT NULL DEFAULT '{}',
        schema_version integer NOT NULL DEFAULT 1,
        topology jsonb NOT NULL DEFAULT '{}'::jsonb,
        meta jsonb NOT NULL DEFAULT '{}'::jsonb,
        extra jsonb NOT NULL DEFAULT '{}'::jsonb,
        current_revision_id uuid NOT NULL,
        current_revision_number integer NOT NULL,
        snapshot_hash text NOT NULL,
        entities_count integer NOT NULL DEFAULT 0,
        edges_count integer NOT NULL DEFAULT 0,
        topology_component_count integer NOT NULL DEFAULT 0,
        topology_node_count bigint NOT NULL DEFAULT 0,
        topology_endpoint_count integer NOT NULL DEFAULT 0,
        infra_host_types text[] NOT NULL DEFAULT '{}',
        infra_providers text[] NOT NULL DEFAULT '{}',
        infra_regions text[] NOT NULL DEFAULT '{}',
        created_by uuid NOT NULL,
        updated_by uuid NOT NULL,
        archived_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_environments PRIMARY KEY (id),
        CONSTRAINT ck_environments_revision_number CHECK (current_revision_number >= 1),
        CONSTRAINT fk_environments_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_environments_created_by FOREIGN KEY (created_by) REFERENCES users(id),
        CONSTRAINT fk_environments_updated_by FOREIGN KEY (updated_by) REFERENCES users(id)
      )`);
    await q.query(`
      CREATE TABLE environment_revisions (
        id uuid NOT NULL,
        environment_id uuid NOT NULL,
        project_id uuid NOT NULL,
        revision_number integer NOT NULL,
        schema_version integer NOT NULL DEFAULT 1,
        is_current boolean NOT NULL DEFAULT false,
        revision_note text,
        full_snapshot jsonb NOT NULL,
        snapshot_hash text NOT NULL,
        entities jsonb NOT NULL DEFAULT '[]'::jsonb,
        edges jsonb NOT NULL DEFAULT '[]'::jsonb,
        entities_count integer NOT NULL DEFAULT 0,
        edges_count integer NOT NULL DEFAULT 0,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_environment_revisions PRIMARY KEY (id),
        CONSTRAINT uq_environment_revisions_number UNIQUE (environment_id, revision_number),
        CONSTRAINT ck_environment_revisions_number CHECK (revision_number >= 1),
        CONSTRAINT fk_environment_revisions_environment FOREIGN KEY (environment_id) REFERENCES environments(id) ON DELETE CASCADE,
        CONSTRAINT fk_environment_revisions_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_environment_revisions_created_by FOREIGN KEY (created_by) REFERENCES users(id)
      )`);
    await q.query(`
      ALTER TABLE environments
        ADD CONSTRAINT fk_environments_current_revision FOREIGN KEY (current_revision_id)
        REFERENCES environment_revisions(id) DEFERRABLE INITIALLY DEFERRED`);

    // Exactly one current revision per environment.
    await q.query(
      `CREATE UNIQUE INDEX uq_environment_revisions_current ON environment_revisions (environment_id) WHERE is_current`,
    );
    await q.query(
      `CREATE INDEX ix_environment_revisions_project ON environment_revisions (project_id)`,
    );
    await q.query(
      `CREATE INDEX ix_environment_revisions_created_by ON environment_revisions (created_by)`,
    );

    // List filters and sorts: project (+ archived), created_at / updated_at / lower(name), use_case, search.
    await q.query(
      `CREATE INDEX ix_environments_project_created ON environments (project_id, created_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_environments_project_updated ON environments (project_id, updated_at, id)`,
    );
    await q.query(
      `CREATE INDEX ix_environments_project_name ON environments (project_id, lower(name), id)`,
    );
    await q.query(
      `CREATE INDEX ix_environments_project_archived ON environments (project_id, archived_at)`,
    );
    await q.query(`CREATE INDEX ix_environments_use_cases ON environments USING gin (use_cases)`);
    await q.query(
      `CREATE INDEX ix_environments_name_trgm ON environments USING gin (name gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX ix_environments_description_trgm ON environments USING gin (description gin_trgm_ops)`,
    );
    await q.query(
      `CREATE INDEX ix_environments_current_revision ON environments (current_revision_id)`,
    );
    await q.query(`CREATE INDEX ix_environments_created_by ON environments (created_by)`);
    await q.query(`CREATE INDEX ix_environments_updated_by ON environments (updated_by)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE environments DROP CONSTRAINT fk_environments_current_revision`);
    await q.query(`DROP TABLE environment_revisions`);
    await q.query(`DROP TABLE environments`);
  }
}
