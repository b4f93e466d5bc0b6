-- 0017_master_data.sql: resources (spec 2.9, 4.12) and the material catalog (spec 4.12; issue 11).

-- 1. resources: tooling, fixtures, molds, materials and equipment; synced from the ERP by external key
CREATE TABLE resources (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  type text NOT NULL CONSTRAINT resources_type_check CHECK (type IN ('tooling', 'fixture', 'mold', 'material', 'equipment')),
  description text,
  identifier text,
  location text,
  status text NOT NULL DEFAULT 'available' CONSTRAINT resources_status_check CHECK (status IN ('available', 'in_use', 'maintenance')),
  external_id text,
  external_source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT resources_pkey PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX resources_id_key ON resources (id);
CREATE UNIQUE INDEX resources_tenant_external_key ON resources (tenant_id, external_source, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX resources_tenant_created_idx ON resources (tenant_id, created_at, id);
CREATE INDEX resources_tenant_type_idx ON resources (tenant_id, type);
SELECT mes_define_record_json('resources');

-- 2. the material catalog: one entry per name and tenant; parts name a material by text (`material`) and
--    may point at its entry (`material_id`)
CREATE TABLE materials (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT materials_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT materials_tenant_name_key UNIQUE (tenant_id, name)
);
CREATE UNIQUE INDEX materials_id_key ON materials (id);

-- entries for what parts already use: each material_id (named after its parts' material) and each name
INSERT INTO materials (tenant_id, id, name)
  SELECT tenant_id, material_id, coalesce(min(material), 'material ' || material_id) FROM parts
  WHERE material_id IS NOT NULL GROUP BY tenant_id, material_id
  ON CONFLICT DO NOTHING;
UPDATE parts p SET material_id = NULL
  WHERE material_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM materials m WHERE m.tenant_id = p.tenant_id AND m.id = p.material_id);
INSERT INTO materials (tenant_id, id, name)
  SELECT DISTINCT tenant_id, mes_uuid7(), material FROM (SELECT DISTINCT tenant_id, material FROM parts WHERE material IS NOT NULL) u
  ON CONFLICT DO NOTHING;

-- a part's material_id names an entry of its own tenant; an entry in use is not deleted
ALTER TABLE parts ADD CONSTRAINT parts_material_fkey FOREIGN KEY (tenant_id, material_id) REFERENCES materials (tenant_id, id) ON DELETE RESTRICT;
CREATE INDEX parts_tenant_material_id_idx ON parts (tenant_id, material_id) WHERE material_id IS NOT NULL;

-- 3. the material names a tenant uses: its catalog entries, and the names live parts carry that no entry
--    has yet (id NULL: POST /api-materials makes them entries)
CREATE VIEW material_names AS
  SELECT m.tenant_id, m.id, m.name, m.description, true AS in_catalog, m.created_at, m.updated_at FROM materials m
  UNION ALL
  SELECT p.tenant_id, NULL::uuid, p.material, NULL::text, false, min(p.created_at), max(p.updated_at)
  FROM parts p
  WHERE p.material IS NOT NULL
    AND EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = p.tenant_id AND j.id = p.job_id AND j.deleted_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM materials m WHERE m.tenant_id = p.tenant_id AND m.name = p.material)
  GROUP BY p.tenant_id, p.material;
SELECT mes_define_record_json_as('material_names', ARRAY[
  ['id', 'uuid', 'r.id'], ['tenant_id', 'uuid', 'r.tenant_id'], ['name', 'text', 'r.name'], ['description', 'text', 'r.description'],
  ['in_catalog', 'boolean', 'r.in_catalog'], ['created_at', 'text', 'mes_ts(r.created_at)'], ['updated_at', 'text', 'mes_ts(r.updated_at)']]);
-- a catalog entry reads as the list shows it
SELECT mes_define_record_json_as('materials', ARRAY[
  ['id', 'uuid', 'r.id'], ['tenant_id', 'uuid', 'r.tenant_id'], ['name', 'text', 'r.name'], ['description', 'text', 'r.description'],
  ['in_catalog', 'boolean', 'true'], ['created_at', 'text', 'mes_ts(r.created_at)'], ['updated_at', 'text', 'mes_ts(r.updated_at)']]);
