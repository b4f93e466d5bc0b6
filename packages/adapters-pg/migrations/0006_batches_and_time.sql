-- 0006_batches_and_time.sql: batches of operations (spec 2.6, 3.3) and the time rules of spec 2.8.
-- An operation belongs to at most one batch: a unique key on batch_operations.operation_id makes
-- two concurrent batch creates unable to both take it.

-- 1. at most one open time entry per operator per operation
CREATE UNIQUE INDEX time_entries_open_key ON time_entries (tenant_id, operation_id, user_id)
  WHERE end_time IS NULL AND user_id IS NOT NULL;
CREATE INDEX time_entries_user_idx ON time_entries (tenant_id, user_id, start_time);
CREATE INDEX time_entries_active_idx ON time_entries (tenant_id, operation_id) WHERE end_time IS NULL;
ALTER TABLE time_entries ADD CONSTRAINT time_entries_end_after_start_check CHECK (end_time IS NULL OR end_time >= start_time);
ALTER TABLE time_entries ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- 2. batches
CREATE TABLE batches (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  batch_number text NOT NULL,
  batch_type text NOT NULL DEFAULT 'general'
    CONSTRAINT batches_type_check CHECK (batch_type IN ('laser_nesting', 'tube_batch', 'saw_batch', 'finishing_batch', 'general')),
  cell_id uuid NOT NULL,
  material text,
  thickness_mm double precision,
  parent_batch_id uuid,
  nesting_metadata jsonb,
  nesting_image_url text,
  layout_image_url text,
  notes text,
  status text NOT NULL DEFAULT 'draft'
    CONSTRAINT batches_status_check CHECK (status IN ('draft', 'ready', 'in_progress', 'completed', 'cancelled')),
  operator_id uuid,
  started_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT batches_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT batches_cell_fkey FOREIGN KEY (tenant_id, cell_id) REFERENCES cells (tenant_id, id),
  CONSTRAINT batches_parent_fkey FOREIGN KEY (tenant_id, parent_batch_id) REFERENCES batches (tenant_id, id),
  CONSTRAINT batches_operator_fkey FOREIGN KEY (tenant_id, operator_id) REFERENCES profiles (tenant_id, id),
  CONSTRAINT batches_parent_not_self_check CHECK (parent_batch_id IS NULL OR parent_batch_id <> id)
);
CREATE UNIQUE INDEX batches_id_key ON batches (id);
CREATE UNIQUE INDEX batches_tenant_batch_number_key ON batches (tenant_id, batch_number);
CREATE INDEX batches_tenant_created_idx ON batches (tenant_id, created_at, id);
CREATE INDEX batches_tenant_status_idx ON batches (tenant_id, status);
CREATE INDEX batches_cell_idx ON batches (tenant_id, cell_id);

-- 3. the operations of a batch, in order; one batch per operation
CREATE TABLE batch_operations (
  tenant_id uuid NOT NULL,
  batch_id uuid NOT NULL,
  operation_id uuid NOT NULL,
  sequence integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT batch_operations_pkey PRIMARY KEY (tenant_id, batch_id, operation_id),
  CONSTRAINT batch_operations_batch_fkey FOREIGN KEY (tenant_id, batch_id) REFERENCES batches (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT batch_operations_operation_fkey FOREIGN KEY (tenant_id, operation_id) REFERENCES operations (tenant_id, id),
  CONSTRAINT batch_operations_operation_key UNIQUE (tenant_id, operation_id)
);

-- 4. time entries opened by a batch point at it
ALTER TABLE time_entries ADD CONSTRAINT time_entries_batch_fkey FOREIGN KEY (tenant_id, batch_id) REFERENCES batches (tenant_id, id);
CREATE INDEX time_entries_batch_idx ON time_entries (tenant_id, batch_id) WHERE batch_id IS NOT NULL;

-- 5. how a stopped batch's tracked time was shared out, per operation, for audit (spec 3.3)
CREATE TABLE batch_time_shares (
  tenant_id uuid NOT NULL,
  batch_id uuid NOT NULL,
  operation_id uuid NOT NULL,
  basis text NOT NULL CONSTRAINT batch_time_shares_basis_check CHECK (basis IN ('estimated_time', 'equal')),
  weight double precision NOT NULL,
  tracked_seconds integer NOT NULL,
  share_seconds integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT batch_time_shares_pkey PRIMARY KEY (tenant_id, batch_id, operation_id),
  CONSTRAINT batch_time_shares_batch_fkey FOREIGN KEY (tenant_id, batch_id) REFERENCES batches (tenant_id, id) ON DELETE CASCADE
);
