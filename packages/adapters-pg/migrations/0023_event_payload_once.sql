-- 0023_event_payload_once.sql: an event's payload is stored once, in event_log. The outbox row is the
-- dispatcher's queue entry and refers to its payload by (tenant_id, xid, id) = event_log (tenant_id, xid, seq).
-- Before, every event was written with its payload to the outbox and copied, payload and all, into the log by a
-- statement trigger: a second compressed copy of each payload (a job.created carries the whole nested job,
-- ≈ 15 KB of JSON) and a PL/pgSQL call per writing statement. The writers (events.ts, eventWrites) now insert
-- both rows in the change's statement.

DROP TRIGGER outbox_log ON outbox;
DROP FUNCTION mes_log_events();

-- queued events that have no log row (queued before 0018) get one, then every queued event its log row's xid
INSERT INTO event_log (tenant_id, seq, event_id, event_type, data, occurred_at)
SELECT o.tenant_id, o.id, o.event_id, o.event_type, o.data, o.occurred_at
FROM outbox o
WHERE NOT EXISTS (SELECT 1 FROM event_log l WHERE l.tenant_id = o.tenant_id AND l.seq = o.id AND l.event_id = o.event_id);

ALTER TABLE outbox ADD COLUMN xid xid8;
UPDATE outbox o SET xid = l.xid
FROM event_log l
WHERE l.tenant_id = o.tenant_id AND l.seq = o.id AND l.event_id = o.event_id;
ALTER TABLE outbox ALTER COLUMN xid SET DEFAULT pg_current_xact_id(), ALTER COLUMN xid SET NOT NULL, DROP COLUMN data;

-- Payloads and delivery bodies above 2 KB are compressed when stored: lz4 where the server has it (PostgreSQL
-- built --with-lz4, as Debian's and the official images are) costs a fraction of the default pglz's CPU for the
-- same size here; PGlite has only pglz.
DO $$
BEGIN
  ALTER TABLE event_log ALTER COLUMN data SET COMPRESSION lz4;
  ALTER TABLE webhook_deliveries ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
