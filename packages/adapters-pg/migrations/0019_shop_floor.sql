-- 0019_shop_floor.sql: scrap reasons, good/scrap/rework quantities per operation, operator assignments,
-- substep templates and cell downtime (spec 4.12; issue 12). Every table is keyed (tenant_id, id) and every
-- reference carries tenant_id, so a link into another tenant cannot be stored.

-- 1. scrap reasons: a code per tenant, a category, active; a new tenant starts with a default set
CREATE TABLE scrap_reasons (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  code text NOT NULL,
  description text NOT NULL,
  category text NOT NULL DEFAULT 'other'
    CONSTRAINT scrap_reasons_category_check CHECK (category IN ('material', 'process', 'equipment', 'operator', 'other')),
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT scrap_reasons_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT scrap_reasons_tenant_code_key UNIQUE (tenant_id, code)
);
CREATE UNIQUE INDEX scrap_reasons_id_key ON scrap_reasons (id);
CREATE INDEX scrap_reasons_tenant_created_idx ON scrap_reasons (tenant_id, created_at, id);
SELECT mes_define_record_json('scrap_reasons');

CREATE FUNCTION mes_default_scrap_reasons(tenant uuid) RETURNS void LANGUAGE sql AS $$
  INSERT INTO scrap_reasons (tenant_id, id, code, description, category)
  SELECT tenant, mes_uuid7(), d.code, d.description, d.category
  FROM (VALUES
    (1, 'MATERIAL', 'Material defect (inclusions, wrong grade, surface damage as received)', 'material'),
    (2, 'DIMENSION', 'Dimension out of tolerance', 'process'),
    (3, 'SETUP', 'Set-up or first-off part', 'process'),
    (4, 'MACHINE', 'Machine or tooling fault', 'equipment'),
    (5, 'HANDLING', 'Damaged in handling', 'operator'),
    (6, 'OTHER', 'Other', 'other')
  ) AS d (n, code, description, category)
  ORDER BY d.n
  ON CONFLICT DO NOTHING
$$;
CREATE FUNCTION mes_tenant_defaults() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mes_default_scrap_reasons(NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_defaults AFTER INSERT ON tenants FOR EACH ROW EXECUTE FUNCTION mes_tenant_defaults();
SELECT mes_default_scrap_reasons(id) FROM tenants;

-- 2. quantities recorded against an operation: an insert-only ledger (corrections are PATCH or DELETE of an
--    entry); totals are sums over it, so concurrent recordings never wait on a shared row
CREATE TABLE operation_quantities (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  operation_id uuid NOT NULL,
  good integer NOT NULL DEFAULT 0 CONSTRAINT operation_quantities_good_check CHECK (good >= 0),
  scrap integer NOT NULL DEFAULT 0 CONSTRAINT operation_quantities_scrap_check CHECK (scrap >= 0),
  rework integer NOT NULL DEFAULT 0 CONSTRAINT operation_quantities_rework_check CHECK (rework >= 0),
  scrap_reason_id uuid,
  user_id uuid,
  issue_id uuid,
  notes text,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT operation_quantities_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT operation_quantities_operation_fkey FOREIGN KEY (tenant_id, operation_id) REFERENCES operations (tenant_id, id) ON DELETE RESTRICT,
  CONSTRAINT operation_quantities_scrap_reason_fkey FOREIGN KEY (tenant_id, scrap_reason_id) REFERENCES scrap_reasons (tenant_id, id),
  CONSTRAINT operation_quantities_user_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES profiles (tenant_id, id),
  CONSTRAINT operation_quantities_issue_fkey FOREIGN KEY (tenant_id, issue_id) REFERENCES issues (tenant_id, id),
  CONSTRAINT operation_quantities_scrap_reason_check CHECK (scrap = 0 OR scrap_reason_id IS NOT NULL)
);
CREATE UNIQUE INDEX operation_quantities_id_key ON operation_quantities (id);
CREATE INDEX operation_quantities_operation_idx ON operation_quantities (tenant_id, operation_id) INCLUDE (good, scrap, rework);
CREATE INDEX operation_quantities_tenant_recorded_idx ON operation_quantities (tenant_id, recorded_at, id);
CREATE INDEX operation_quantities_reason_idx ON operation_quantities (tenant_id, scrap_reason_id) WHERE scrap_reason_id IS NOT NULL;
CREATE INDEX operation_quantities_user_idx ON operation_quantities (tenant_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX operation_quantities_issue_idx ON operation_quantities (tenant_id, issue_id) WHERE issue_id IS NOT NULL;
-- an entry names its part and job too (for filters and events), through its operation
SELECT mes_define_record_json('operation_quantities', '{}', ARRAY[
  ['part_id', 'uuid', '(SELECT o.part_id FROM operations o WHERE o.tenant_id = r.tenant_id AND o.id = r.operation_id)'],
  ['job_id', 'uuid', '(SELECT p.job_id FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id WHERE o.tenant_id = r.tenant_id AND o.id = r.operation_id)']]);

-- the running totals of an operation and of a part, as JSON ({"good":…,"scrap":…,"rework":…})
CREATE FUNCTION mes_operation_totals(tenant uuid, operation uuid) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT json_build_object('good', coalesce(sum(q.good), 0), 'scrap', coalesce(sum(q.scrap), 0), 'rework', coalesce(sum(q.rework), 0))::text
  FROM operation_quantities q WHERE q.tenant_id = tenant AND q.operation_id = operation
$$;
CREATE FUNCTION mes_part_totals(tenant uuid, part uuid) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT json_build_object('good', coalesce(sum(q.good), 0), 'scrap', coalesce(sum(q.scrap), 0), 'rework', coalesce(sum(q.rework), 0))::text
  FROM operations o JOIN operation_quantities q ON q.tenant_id = o.tenant_id AND q.operation_id = o.id
  WHERE o.tenant_id = tenant AND o.part_id = part
$$;

-- 3. assignments of operators to exactly one of an operation, a part, a job or a cell
CREATE TABLE assignments (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  operation_id uuid,
  part_id uuid,
  job_id uuid,
  cell_id uuid,
  assigned_by uuid,
  active boolean NOT NULL DEFAULT true,
  notes text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT assignments_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT assignments_user_fkey FOREIGN KEY (tenant_id, user_id) REFERENCES profiles (tenant_id, id),
  CONSTRAINT assignments_assigned_by_fkey FOREIGN KEY (tenant_id, assigned_by) REFERENCES profiles (tenant_id, id),
  CONSTRAINT assignments_operation_fkey FOREIGN KEY (tenant_id, operation_id) REFERENCES operations (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT assignments_part_fkey FOREIGN KEY (tenant_id, part_id) REFERENCES parts (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT assignments_job_fkey FOREIGN KEY (tenant_id, job_id) REFERENCES jobs (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT assignments_cell_fkey FOREIGN KEY (tenant_id, cell_id) REFERENCES cells (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT assignments_one_target_check CHECK (num_nonnulls(operation_id, part_id, job_id, cell_id) = 1)
);
CREATE UNIQUE INDEX assignments_id_key ON assignments (id);
CREATE INDEX assignments_user_idx ON assignments (tenant_id, user_id);
CREATE INDEX assignments_tenant_created_idx ON assignments (tenant_id, created_at, id);
CREATE INDEX assignments_operation_idx ON assignments (tenant_id, operation_id) WHERE operation_id IS NOT NULL;
CREATE INDEX assignments_part_idx ON assignments (tenant_id, part_id) WHERE part_id IS NOT NULL;
CREATE INDEX assignments_job_idx ON assignments (tenant_id, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX assignments_cell_idx ON assignments (tenant_id, cell_id) WHERE cell_id IS NOT NULL;
CREATE INDEX assignments_assigned_by_idx ON assignments (tenant_id, assigned_by) WHERE assigned_by IS NOT NULL;

-- the job an assignment's target belongs to (none for a cell): its due date and priority order a work queue
CREATE FUNCTION mes_assignment_job(a assignments) RETURNS jobs LANGUAGE sql STABLE AS $$
  SELECT j FROM jobs j
  WHERE j.tenant_id = a.tenant_id AND j.id = coalesce(
    a.job_id,
    (SELECT p.job_id FROM parts p WHERE p.tenant_id = a.tenant_id AND p.id = a.part_id),
    (SELECT p.job_id FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
      WHERE o.tenant_id = a.tenant_id AND o.id = a.operation_id))
$$;
SELECT mes_define_record_json('assignments', '{}', ARRAY[
  ['target_type', 'text', 'CASE WHEN r.operation_id IS NOT NULL THEN ''operation'' WHEN r.part_id IS NOT NULL THEN ''part'' WHEN r.job_id IS NOT NULL THEN ''job'' ELSE ''cell'' END'],
  ['job_number', 'text', '(mes_assignment_job(r)).job_number'],
  ['due_date', 'date', 'coalesce((mes_assignment_job(r)).due_date_override, (mes_assignment_job(r)).due_date)'],
  ['priority', 'integer', '(mes_assignment_job(r)).priority']]);

-- 4. substep templates and their ordered items; applying one copies its items into an operation's substeps
CREATE TABLE substep_templates (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  description text,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT substep_templates_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT substep_templates_tenant_name_key UNIQUE (tenant_id, name)
);
CREATE UNIQUE INDEX substep_templates_id_key ON substep_templates (id);
CREATE INDEX substep_templates_tenant_created_idx ON substep_templates (tenant_id, created_at, id);

CREATE TABLE substep_template_items (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  template_id uuid NOT NULL,
  description text NOT NULL,
  sequence integer NOT NULL CONSTRAINT substep_template_items_sequence_check CHECK (sequence >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT substep_template_items_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT substep_template_items_template_fkey FOREIGN KEY (tenant_id, template_id) REFERENCES substep_templates (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX substep_template_items_id_key ON substep_template_items (id);
CREATE UNIQUE INDEX substep_template_items_sequence_key ON substep_template_items (tenant_id, template_id, sequence);
CREATE INDEX substep_template_items_tenant_created_idx ON substep_template_items (tenant_id, created_at, id);
SELECT mes_define_record_json('substep_template_items');
SELECT mes_define_record_json('substep_templates', '{}', ARRAY[['items', 'json',
  '(SELECT coalesce(json_agg(substep_template_items_json(i)::json ORDER BY i.sequence), ''[]'') FROM substep_template_items i WHERE i.tenant_id = r.tenant_id AND i.template_id = r.id)']]);

-- 5. downtime of a cell: planned (breaks, scheduled maintenance) or not; open-ended (end_time NULL) while it lasts
CREATE TABLE downtime (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  cell_id uuid NOT NULL,
  reason text NOT NULL,
  planned boolean NOT NULL DEFAULT false,
  start_time timestamptz NOT NULL DEFAULT now(),
  end_time timestamptz,
  notes text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT downtime_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT downtime_cell_fkey FOREIGN KEY (tenant_id, cell_id) REFERENCES cells (tenant_id, id) ON DELETE RESTRICT,
  CONSTRAINT downtime_end_after_start_check CHECK (end_time IS NULL OR end_time >= start_time)
);
CREATE UNIQUE INDEX downtime_id_key ON downtime (id);
CREATE INDEX downtime_cell_idx ON downtime (tenant_id, cell_id, start_time);
CREATE INDEX downtime_tenant_start_idx ON downtime (tenant_id, start_time, id);
CREATE INDEX downtime_tenant_created_idx ON downtime (tenant_id, created_at, id);
SELECT mes_define_record_json('downtime', '{}', ARRAY[['duration_minutes', 'double precision',
  'CASE WHEN r.end_time IS NOT NULL THEN round((extract(epoch FROM r.end_time - r.start_time) / 60)::numeric, 2)::float8 END']]);

-- OEE reads time entries by the time they ran
CREATE INDEX time_entries_tenant_start_idx ON time_entries (tenant_id, start_time);
