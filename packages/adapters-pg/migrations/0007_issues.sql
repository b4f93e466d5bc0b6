-- 0007_issues.sql: quality issues and non-conformance reports, one table (spec 2.4, 4.7).
-- NCR numbers come from a per-tenant, per-year counter bumped atomically (DECISIONS).

-- 1. table
CREATE TABLE issues (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  operation_id uuid NOT NULL,
  title text NOT NULL,
  description text NOT NULL,
  severity text CONSTRAINT issues_severity_check CHECK (severity IN ('low', 'medium', 'high', 'critical')),
  status text NOT NULL DEFAULT 'open' CONSTRAINT issues_status_check CHECK (status IN ('open', 'in_progress', 'resolved', 'closed')),
  issue_type text NOT NULL DEFAULT 'general' CONSTRAINT issues_type_check CHECK (issue_type IN ('general', 'ncr')),
  reported_by_id uuid,
  assigned_to_id uuid,
  resolved_by_id uuid,
  verified_by_id uuid,
  resolution_notes text,
  ncr_number text,
  ncr_category text CONSTRAINT issues_ncr_category_check
    CHECK (ncr_category IN ('material', 'process', 'equipment', 'design', 'supplier', 'documentation', 'other')),
  ncr_disposition text CONSTRAINT issues_ncr_disposition_check
    CHECK (ncr_disposition IN ('use_as_is', 'rework', 'repair', 'scrap', 'return_to_supplier')),
  root_cause text,
  corrective_action text,
  preventive_action text,
  affected_quantity integer,
  verification_required boolean,
  verified_at timestamptz,
  resolved_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT issues_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT issues_operation_fkey FOREIGN KEY (tenant_id, operation_id) REFERENCES operations (tenant_id, id),
  CONSTRAINT issues_reported_by_fkey FOREIGN KEY (tenant_id, reported_by_id) REFERENCES profiles (tenant_id, id),
  CONSTRAINT issues_assigned_to_fkey FOREIGN KEY (tenant_id, assigned_to_id) REFERENCES profiles (tenant_id, id),
  CONSTRAINT issues_resolved_by_fkey FOREIGN KEY (tenant_id, resolved_by_id) REFERENCES profiles (tenant_id, id),
  CONSTRAINT issues_verified_by_fkey FOREIGN KEY (tenant_id, verified_by_id) REFERENCES profiles (tenant_id, id)
);
CREATE UNIQUE INDEX issues_id_key ON issues (id);

-- 2. an NCR number names one report per tenant
CREATE UNIQUE INDEX issues_tenant_ncr_number_key ON issues (tenant_id, ncr_number) WHERE ncr_number IS NOT NULL;

-- 3. indexes for the filters and sorts of spec 4.7
CREATE INDEX issues_tenant_created_idx ON issues (tenant_id, created_at, id);
CREATE INDEX issues_operation_idx ON issues (tenant_id, operation_id);
CREATE INDEX issues_tenant_status_idx ON issues (tenant_id, status);
CREATE INDEX issues_tenant_severity_idx ON issues (tenant_id, severity);
CREATE INDEX issues_tenant_type_idx ON issues (tenant_id, issue_type);
CREATE INDEX issues_reported_by_idx ON issues (tenant_id, reported_by_id) WHERE reported_by_id IS NOT NULL;
CREATE INDEX issues_assigned_to_idx ON issues (tenant_id, assigned_to_id) WHERE assigned_to_id IS NOT NULL;
CREATE INDEX issues_tenant_resolved_idx ON issues (tenant_id, resolved_at);

-- 4. NCR number counters: one row per tenant and year, bumped with INSERT ... ON CONFLICT DO UPDATE
CREATE TABLE ncr_counters (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  year integer NOT NULL,
  last_value integer NOT NULL,
  CONSTRAINT ncr_counters_pkey PRIMARY KEY (tenant_id, year)
);
