-- 0003_parts.sql: parts of a job (spec 2.2, 4.2). A parent part must be in the same job:
-- the composite reference (tenant_id, job_id, parent_part_id) makes that a database rule.

-- 1. table
CREATE TABLE parts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  job_id uuid NOT NULL,
  part_number text NOT NULL,
  quantity integer NOT NULL CONSTRAINT parts_quantity_check CHECK (quantity >= 1),
  material text,
  description text,
  drawing_no text,
  cnc_program_name text,
  is_bullet_card boolean NOT NULL DEFAULT false,
  material_lot text,
  material_supplier text,
  material_cert_number text,
  parent_part_id uuid,
  current_cell_id uuid,
  material_id uuid,
  drawing_url text,
  step_file_url text,
  notes text,
  metadata jsonb,
  file_paths text[],
  status text NOT NULL DEFAULT 'not_started'
    CONSTRAINT parts_status_check CHECK (status IN ('not_started', 'in_progress', 'completed')),
  external_id text,
  external_source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT parts_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT parts_job_fkey FOREIGN KEY (tenant_id, job_id) REFERENCES jobs (tenant_id, id),
  CONSTRAINT parts_job_id_key UNIQUE (tenant_id, job_id, id),
  CONSTRAINT parts_parent_part_fkey FOREIGN KEY (tenant_id, job_id, parent_part_id) REFERENCES parts (tenant_id, job_id, id),
  CONSTRAINT parts_parent_not_self_check CHECK (parent_part_id IS NULL OR parent_part_id <> id),
  CONSTRAINT parts_current_cell_fkey FOREIGN KEY (tenant_id, current_cell_id) REFERENCES cells (tenant_id, id)
);
CREATE UNIQUE INDEX parts_id_key ON parts (id);

-- 2. uniqueness from the spec: one part_number per job; one external id per source
CREATE UNIQUE INDEX parts_job_part_number_key ON parts (tenant_id, job_id, part_number);
CREATE UNIQUE INDEX parts_tenant_external_key ON parts (tenant_id, external_source, external_id) WHERE external_id IS NOT NULL;

-- 3. indexes for the filters and sorts of spec 4.2 and for child lookups
CREATE INDEX parts_tenant_created_idx ON parts (tenant_id, created_at, id);
CREATE INDEX parts_parent_idx ON parts (tenant_id, parent_part_id) WHERE parent_part_id IS NOT NULL;
CREATE INDEX parts_tenant_material_idx ON parts (tenant_id, material);
CREATE INDEX parts_tenant_material_lot_idx ON parts (tenant_id, material_lot);
CREATE INDEX parts_tenant_status_idx ON parts (tenant_id, status);
CREATE INDEX parts_current_cell_idx ON parts (tenant_id, current_cell_id) WHERE current_cell_id IS NOT NULL;
