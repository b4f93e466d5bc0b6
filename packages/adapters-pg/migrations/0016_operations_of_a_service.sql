-- 0016_operations_of_a_service.sql: the monthly reset's log and schedule, API-key management, and the
-- daily request counts of cloud plans (issue 10; spec 2.9, 4.12, 4.13, 8).

-- 1. one record per tenant per reset (spec 2.9): the parts counted in the billing period it closes
CREATE TABLE monthly_reset_logs (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  reset_date timestamptz NOT NULL,
  previous_parts_count integer NOT NULL,
  -- the tenant's previous reset (or its creation) to this reset
  billing_period_start timestamptz NOT NULL,
  billing_period_end timestamptz NOT NULL,
  reset_type text NOT NULL CONSTRAINT monthly_reset_logs_reset_type_check CHECK (reset_type IN ('automatic', 'manual')),
  metadata jsonb NOT NULL DEFAULT '{}',
  CONSTRAINT monthly_reset_logs_pkey PRIMARY KEY (tenant_id, id)
);
CREATE INDEX monthly_reset_logs_tenant_date_idx ON monthly_reset_logs (tenant_id, reset_date DESC);

-- 2. the in-process schedule's periods: the process that inserts a period's row runs its reset, so
--    several processes on one database reset once; a claim never finished is taken over after a while
CREATE TABLE monthly_reset_periods (
  period_start timestamptz PRIMARY KEY,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
-- the month this database is set up (or upgraded) in needs no catch-up reset: its counts are this month's
INSERT INTO monthly_reset_periods (period_start, finished_at)
  VALUES (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', now());

-- 3. API keys as the key-management endpoint lists them: never the hash; when a key was last used,
--    to the auth cache's bound (written when a process first verifies it, not on every request)
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
SELECT mes_define_record_json_as('api_keys', ARRAY[
  ['id', 'uuid', 'r.id'], ['tenant_id', 'uuid', 'r.tenant_id'], ['name', 'text', 'r.name'], ['prefix', 'text', 'r.key_prefix'],
  ['environment', 'text', 'r.environment'], ['created_at', 'text', 'mes_ts(r.created_at)'],
  ['last_used_at', 'text', 'mes_ts(r.last_used_at)'], ['revoked_at', 'text', 'mes_ts(r.revoked_at)']]);
CREATE INDEX api_keys_tenant_created_idx ON api_keys (tenant_id, created_at, id);

-- 4. requests per tenant per UTC day in cloud mode (spec 8): one statement outside any transaction adds
--    one; enterprise tenants and tenants past their limit are never counted
CREATE TABLE api_request_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  day date NOT NULL,
  requests integer NOT NULL,
  CONSTRAINT api_request_counts_pkey PRIMARY KEY (tenant_id, day)
);
