-- 0008_substeps.sql: checklist steps of an operation (spec 2.5, 4.8).

CREATE TABLE substeps (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  operation_id uuid NOT NULL,
  description text NOT NULL,
  sequence integer NOT NULL CONSTRAINT substeps_sequence_check CHECK (sequence >= 1),
  completed boolean NOT NULL DEFAULT false,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT substeps_pkey PRIMARY KEY (tenant_id, id),
  -- an operation's checklist goes with it
  CONSTRAINT substeps_operation_fkey FOREIGN KEY (tenant_id, operation_id) REFERENCES operations (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX substeps_id_key ON substeps (id);
CREATE INDEX substeps_operation_idx ON substeps (tenant_id, operation_id, sequence);
