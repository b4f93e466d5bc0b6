-- 0002_jobs.sql: jobs (spec 2.1, 4.1). Soft-deleted rows keep their data but free their
-- job_number and external id for reuse (DECISIONS).

-- 1. table
CREATE TABLE jobs (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  job_number text NOT NULL,
  customer text,
  due_date date,
  due_date_override date,
  priority integer NOT NULL DEFAULT 0,
  notes text,
  status text NOT NULL DEFAULT 'not_started'
    CONSTRAINT jobs_status_check CHECK (status IN ('not_started', 'in_progress', 'on_hold', 'completed')),
  metadata jsonb,
  current_cell_id uuid,
  started_at timestamptz,
  paused_at timestamptz,
  resumed_at timestamptz,
  completed_at timestamptz,
  actual_duration double precision,
  deleted_at timestamptz,
  external_id text,
  external_source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT jobs_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT jobs_current_cell_fkey FOREIGN KEY (tenant_id, current_cell_id) REFERENCES cells (tenant_id, id)
);
CREATE UNIQUE INDEX jobs_id_key ON jobs (id);

-- 2. uniqueness from the spec, among non-deleted jobs only
CREATE UNIQUE INDEX jobs_tenant_job_number_key ON jobs (tenant_id, job_number) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX jobs_tenant_external_key ON jobs (tenant_id, external_source, external_id)
  WHERE deleted_at IS NULL AND external_id IS NOT NULL;

-- 3. indexes for the filters and sorts of spec 4.1
CREATE INDEX jobs_tenant_created_idx ON jobs (tenant_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX jobs_tenant_status_idx ON jobs (tenant_id, status, created_at) WHERE deleted_at IS NULL;
CREATE INDEX jobs_tenant_priority_idx ON jobs (tenant_id, priority) WHERE deleted_at IS NULL;
CREATE INDEX jobs_tenant_due_date_idx ON jobs (tenant_id, due_date) WHERE deleted_at IS NULL;
CREATE INDEX jobs_tenant_customer_idx ON jobs (tenant_id, customer) WHERE deleted_at IS NULL;
CREATE INDEX jobs_current_cell_idx ON jobs (tenant_id, current_cell_id) WHERE current_cell_id IS NOT NULL;
