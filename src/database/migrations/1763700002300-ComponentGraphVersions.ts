import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The version of each project's component graph (issue #23): every write that changes what
 * `GET /components/graph` answers or what the cycle check reads (create, update, delete of a
 * component, replacement of its dependencies) sets `version` to a new value of
 * `component_graph_version_seq` in its own transaction, keeping the value it replaced in
 * `previous_version`. A process caches a project's graph keyed by (project, version): a cache of
 * immutable data, correct on any number of instances. Values come from a sequence, so a version is
 * never handed out twice, even by a transaction that rolled back. No row: version 0 (nothing
 * written since this migration).
 */
export class ComponentGraphVersions1763700002300 implements MigrationInterface {
  name = 'ComponentGraphVersions1763700002300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE component_graph_version_seq AS bigint`);
    await q.query(`
      CREATE TABLE component_graph_versions (
        project_id uuid NOT NULL,
        version bigint NOT NULL,
        previous_version bigint NOT NULL DEFAULT 0,
        CONSTRAINT pk_component_graph_versions PRIMARY KEY (project_id),
        CONSTRAINT fk_component_graph_versions_project FOREIGN KEY (project_id)
          REFERENCES projects(id) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE component_graph_versions`);
    await q.query(`DROP SEQUENCE component_graph_version_seq`);
  }
}
