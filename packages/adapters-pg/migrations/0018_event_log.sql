-- 0018_event_log.sql: every event, kept (issue 11: GET /api-erp-sync/changes). The outbox is a queue that the
-- dispatcher empties; this log keeps each event its statement wrote, with the writing transaction's id, so a
-- reader can page through it without missing an event of a transaction that commits after it read: it only
-- reads events of transactions older than every transaction still running (pg_snapshot_xmin).

CREATE TABLE event_log (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  -- the outbox id: the order of the events within their transaction
  seq bigint NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  data json NOT NULL,
  occurred_at timestamptz NOT NULL,
  CONSTRAINT event_log_pkey PRIMARY KEY (tenant_id, xid, seq)
);

-- one insert per writing statement, whatever wrote the outbox rows
CREATE FUNCTION mes_log_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_log (tenant_id, seq, event_id, event_type, data, occurred_at)
    SELECT tenant_id, id, event_id, event_type, data, occurred_at FROM fresh;
  RETURN NULL;
END $$;
CREATE TRIGGER outbox_log AFTER INSERT ON outbox REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION mes_log_events();

-- the runs of bulk-sync and /api-erp-sync/sync, for GET /api-erp-sync/status (one row per run)
CREATE TABLE sync_runs (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  kind text NOT NULL,
  external_sources text[] NOT NULL,
  total integer NOT NULL,
  created integer NOT NULL,
  updated integer NOT NULL,
  unchanged integer NOT NULL,
  skipped integer NOT NULL,
  errors integer NOT NULL,
  ran_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT sync_runs_pkey PRIMARY KEY (tenant_id, id)
);
CREATE INDEX sync_runs_tenant_ran_idx ON sync_runs (tenant_id, ran_at DESC);
