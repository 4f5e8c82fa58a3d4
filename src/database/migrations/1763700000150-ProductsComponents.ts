import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Products, components (with risk factors and the computed risk), product-component links and
 * component dependencies (reference products-auth-errors.md §7–8, CONTRACT §9).
 *
 * Links and edges carry the project id and reference their product/components through composite
 * foreign keys on (id, project_id), so a link or an edge can never cross projects.
 */
export class ProductsComponents1763700000150 implements MigrationInterface {
  name = 'ProductsComponents1763700000150';

  async up(q: QueryRunner): Promise<void> {
    // Lower-cased tags for the case-insensitive `tag` filters (GIN-indexable, so IMMUTABLE).
    await q.query(`
      CREATE FUNCTION catalog_lower_tags(tags text[]) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT coalesce(array_agg(lower(t)), '{}') FROM unnest(tags) AS t $$`);
    await q.query(`
      CREATE TABLE products (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        key varchar(100) NOT NULL,
        description text,
        owner_id uuid,
        status varchar(16) NOT NULL DEFAULT 'active',
        tags text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_products PRIMARY KEY (id),
        CONSTRAINT uq_products_project_key UNIQUE (project_id, key),
        CONSTRAINT uq_products_id_project UNIQUE (id, project_id),
        CONSTRAINT ck_products_status CHECK (status IN ('active', 'archived')),
        CONSTRAINT fk_products_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_products_owner FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX ix_products_project_updated ON products (project_id, updated_at DESC, id)`,
    );
    await q.query(`CREATE INDEX ix_products_project_status ON products (project_id, status)`);
    await q.query(`CREATE INDEX ix_products_owner ON products (owner_id)`);
    await q.query(`CREATE INDEX ix_products_tags ON products USING gin (catalog_lower_tags(tags))`);
    await q.query(`CREATE INDEX ix_products_name_trgm ON products USING gin (name gin_trgm_ops)`);
    await q.query(`CREATE INDEX ix_products_key_trgm ON products USING gin (key gin_trgm_ops)`);
    await q.query(
      `CREATE INDEX ix_products_description_trgm ON products USING gin (description gin_trgm_ops)`,
    );

    await q.query(`
      CREATE TABLE components (
        id uuid NOT NULL,
        project_id uuid NOT NULL,
        name varchar(255) NOT NULL,
        key varchar(100) NOT NULL,
        description text,
        owner_id uuid,
        status varchar(16) NOT NULL DEFAULT 'active',
        tags text[] NOT NULL DEFAULT '{}',
        business_criticality smallint NOT NULL DEFAULT 0,
        change_frequency smallint NOT NULL DEFAULT 0,
        integration_complexity smallint NOT NULL DEFAULT 0,
        defect_density smallint NOT NULL DEFAULT 0,
        production_incident_score smallint NOT NULL DEFAULT 0,
        automation_confidence smallint NOT NULL DEFAULT 5,
        risk_score smallint NOT NULL DEFAULT 0,
        risk_level varchar(16) NOT NULL DEFAULT 'low',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_components PRIMARY KEY (id),
        CONSTRAINT uq_components_project_key UNIQUE (project_id, key),
        CONSTRAINT uq_components_id_project UNIQUE (id, project_id),
        CONSTRAINT ck_components_status CHECK (status IN ('active', 'archived')),
        CONSTRAINT ck_components_business_criticality CHECK (business_criticality BETWEEN 0 AND 5),
        CONSTRAINT ck_components_change_frequency CHECK (change_frequency BETWEEN 0 AND 5),
        CONSTRAINT ck_components_integration_complexity CHECK (integration_complexity BETWEEN 0 AND 5),
        CONSTRAINT ck_components_defect_density CHECK (defect_density BETWEEN 0 AND 5),
        CONSTRAINT ck_components_production_incident_score CHECK (production_incident_score BETWEEN 0 AND 5),
        CONSTRAINT ck_components_automation_confidence CHECK (automation_confidence BETWEEN 0 AND 5),
        CONSTRAINT ck_components_risk_score CHECK (risk_score BETWEEN 0 AND 100),
        CONSTRAINT ck_components_risk_level CHECK (risk_level IN ('low', 'medium', 'high', 'critical')),
        CONSTRAINT fk_components_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_components_owner FOREIGN KEY (owner_id) REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(
      `CREATE INDEX ix_components_project_risk ON components (project_id, risk_score DESC, updated_at DESC, id)`,
    );
    await q.query(`CREATE INDEX ix_components_project_status ON components (project_id, status)`);
    await q.query(
      `CREATE INDEX ix_components_project_risk_level ON components (project_id, risk_level)`,
    );
    await q.query(`CREATE INDEX ix_components_owner ON components (owner_id)`);
    await q.query(
      `CREATE INDEX ix_components_tags ON components USING gin (catalog_lower_tags(tags))`,
    );
    await q.query(
      `CREATE INDEX ix_components_name_trgm ON components USING gin (name gin_trgm_ops)`,
    );
    await q.query(`CREATE INDEX ix_components_key_trgm ON components USING gin (key gin_trgm_ops)`);
    await q.query(
      `CREATE INDEX ix_components_description_trgm ON components USING gin (description gin_trgm_ops)`,
    );

    await q.query(`
      CREATE TABLE product_components (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        product_id uuid NOT NULL,
        component_id uuid NOT NULL,
        project_id uuid NOT NULL,
        is_core boolean NOT NULL DEFAULT false,
        sort_order integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_product_components PRIMARY KEY (id),
        CONSTRAINT uq_product_components_product_component UNIQUE (product_id, component_id),
        CONSTRAINT fk_product_components_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_product_components_product FOREIGN KEY (product_id, project_id)
          REFERENCES products(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_product_components_component FOREIGN KEY (component_id, project_id)
          REFERENCES components(id, project_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_product_components_component ON product_components (component_id, product_id)`,
    );
    await q.query(`CREATE INDEX ix_product_components_project ON product_components (project_id)`);
    await q.query(
      `CREATE INDEX ix_product_components_order ON product_components (product_id, sort_order, id)`,
    );

    await q.query(`
      CREATE TABLE component_dependencies (
        id uuid NOT NULL,
        source_component_id uuid NOT NULL,
        target_component_id uuid NOT NULL,
        project_id uuid NOT NULL,
        dependency_type varchar(32) NOT NULL DEFAULT 'depends_on',
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_component_dependencies PRIMARY KEY (id),
        CONSTRAINT uq_component_dependencies_source_target UNIQUE (source_component_id, target_component_id),
        CONSTRAINT ck_component_dependencies_not_self CHECK (source_component_id <> target_component_id),
        CONSTRAINT ck_component_dependencies_type CHECK (dependency_type IN ('depends_on')),
        CONSTRAINT fk_component_dependencies_project FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE,
        CONSTRAINT fk_component_dependencies_source FOREIGN KEY (source_component_id, project_id)
          REFERENCES components(id, project_id) ON DELETE CASCADE,
        CONSTRAINT fk_component_dependencies_target FOREIGN KEY (target_component_id, project_id)
          REFERENCES components(id, project_id) ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX ix_component_dependencies_target ON component_dependencies (target_component_id)`,
    );
    await q.query(
      `CREATE INDEX ix_component_dependencies_project ON component_dependencies (project_id, created_at, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE component_dependencies`);
    await q.query(`DROP TABLE product_components`);
    await q.query(`DROP TABLE components`);
    await q.query(`DROP TABLE products`);
    await q.query(`DROP FUNCTION catalog_lower_tags(text[])`);
  }
}
