-- 0004_operations.sql: operations of a part (spec 2.3, 4.3) and the time entries recorded
-- against them (spec 2.8). An operation with time entries cannot be deleted (RESTRICT).

-- 1. table
CREATE TABLE operations (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  part_id uuid NOT NULL,
  operation_name text NOT NULL,
  sequence integer NOT NULL CONSTRAINT operations_sequence_check CHECK (sequence >= 1),
  cell_id uuid,
  assigned_operator_id uuid,
  estimated_time_minutes double precision CONSTRAINT operations_estimated_check CHECK (estimated_time_minutes >= 0),
  setup_time_minutes double precision CONSTRAINT operations_setup_check CHECK (setup_time_minutes >= 0),
  notes text,
  status text NOT NULL DEFAULT 'not_started'
    CONSTRAINT operations_status_check CHECK (status IN ('not_started', 'in_progress', 'on_hold', 'completed')),
  completion_percentage double precision NOT NULL DEFAULT 0,
  actual_time double precision NOT NULL DEFAULT 0,
  started_at timestamptz,
  paused_at timestamptz,
  resumed_at timestamptz,
  completed_at timestamptz,
  external_id text,
  external_source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT operations_pkey PRIMARY KEY (tenant_id, id),
  -- a part's operations go with it (spec 4.2 DELETE)
  CONSTRAINT operations_part_fkey FOREIGN KEY (tenant_id, part_id) REFERENCES parts (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT operations_cell_fkey FOREIGN KEY (tenant_id, cell_id) REFERENCES cells (tenant_id, id),
  CONSTRAINT operations_assigned_operator_fkey FOREIGN KEY (tenant_id, assigned_operator_id) REFERENCES profiles (tenant_id, id)
);
CREATE UNIQUE INDEX operations_id_key ON operations (id);

-- 2. uniqueness from the spec: one sequence number per part; one external id per source
CREATE UNIQUE INDEX operations_part_sequence_key ON operations (tenant_id, part_id, sequence);
CREATE UNIQUE INDEX operations_tenant_external_key ON operations (tenant_id, external_source, external_id) WHERE external_id IS NOT NULL;

-- 3. indexes for the filters and sorts of spec 4.3
CREATE INDEX operations_tenant_created_idx ON operations (tenant_id, created_at, id);
CREATE INDEX operations_cell_idx ON operations (tenant_id, cell_id) WHERE cell_id IS NOT NULL;
CREATE INDEX operations_tenant_status_idx ON operations (tenant_id, status);
CREATE INDEX operations_operator_idx ON operations (tenant_id, assigned_operator_id) WHERE assigned_operator_id IS NOT NULL;

-- 4. time entries (spec 2.8): an entry with no end_time is active
CREATE TABLE time_entries (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  operation_id uuid NOT NULL,
  user_id uuid,
  batch_id uuid,
  start_time timestamptz NOT NULL,
  end_time timestamptz,
  duration_minutes double precision,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT time_entries_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT time_entries_operation_fkey FOREIGN KEY (tenant_id, operation_id) REFERENCES operations (tenant_id, id) ON DELETE RESTRICT,
  CONSTRAINT time_entries_user_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES profiles (tenant_id, id)
);
CREATE UNIQUE INDEX time_entries_id_key ON time_entries (id);
CREATE INDEX time_entries_operation_idx ON time_entries (tenant_id, operation_id);
