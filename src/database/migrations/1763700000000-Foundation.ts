import { MigrationInterface, QueryRunner } from 'typeorm';

/** Users, API keys, projects and memberships. */
export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      CREATE TABLE users (
        id uuid NOT NULL,
        username varchar(64) NOT NULL,
        display_name varchar(200),
        email varchar(320),
        password_hash varchar(512) NOT NULL,
        is_admin boolean NOT NULL DEFAULT false,
        is_active boolean NOT NULL DEFAULT true,
        token_version integer NOT NULL DEFAULT 0,
        last_login_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_users PRIMARY KEY (id)
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_users_username ON users (lower(username))`);
    await q.query(`CREATE INDEX ix_users_created_at ON users (created_at, id)`);
    await q.query(`
      CREATE TABLE api_keys (
        id uuid NOT NULL,
        user_id uuid NOT NULL,
        name varchar(120) NOT NULL,
        prefix varchar(32) NOT NULL,
        key_hash char(64) NOT NULL,
        expires_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_api_keys PRIMARY KEY (id),
        CONSTRAINT uq_api_keys_prefix UNIQUE (prefix),
        CONSTRAINT fk_api_keys_user FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_api_keys_user ON api_keys (user_id, created_at)`);
    await q.query(`
      CREATE TABLE projects (
        id uuid NOT NULL,
        name varchar(200) NOT NULL,
        description text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_projects PRIMARY KEY (id)
      )`);
    await q.query(`CREATE INDEX ix_projects_created_at ON projects (created_at, id)`);
    await q.query(`CREATE INDEX ix_projects_name_trgm ON projects USING gin (lower(name) gin_trgm_ops)`);
    await q.query(`
      CREATE TABLE project_members (
        project_id uuid NOT NULL,
        user_id uuid NOT NULL,
        role varchar(16) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_project_members PRIMARY KEY (project_id, user_id),
        CONSTRAINT ck_project_members_role CHECK (role IN ('viewer', 'tester', 'lead')),
        CONSTRAINT fk_project_members_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_project_members_user FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_project_members_user ON project_members (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE project_members`);
    await q.query(`DROP TABLE projects`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE users`);
  }
}
