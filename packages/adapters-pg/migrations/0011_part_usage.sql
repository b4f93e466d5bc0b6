-- 0011_part_usage.sql: the monthly parts count as an insert-only ledger (DECISIONS: current_month_parts
-- counts the parts created since the last reset). A counter column on tenants was a hot row: every
-- create of a tenant waited on its lock until commit. Now each write appends one row, which no other
-- request waits on, and the count is the ledger's sum (summed on read, folded at the monthly reset).

-- 1. the ledger: one row per write that created parts
CREATE TABLE part_usage (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  parts integer NOT NULL CONSTRAINT part_usage_parts_check CHECK (parts > 0),
  counted_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT part_usage_pkey PRIMARY KEY (tenant_id, id)
);

-- 2. what the counter held so far
INSERT INTO part_usage (tenant_id, parts) SELECT id, current_month_parts FROM tenants WHERE current_month_parts > 0;
ALTER TABLE tenants DROP COLUMN current_month_parts;

-- 3. the count as the spec names it
CREATE VIEW tenant_usage AS
  SELECT t.id AS tenant_id, coalesce((SELECT sum(u.parts) FROM part_usage u WHERE u.tenant_id = t.id), 0)::int AS current_month_parts
  FROM tenants t;
