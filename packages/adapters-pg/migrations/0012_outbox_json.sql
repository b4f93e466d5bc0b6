-- 0012_outbox_json.sql: event payloads are kept as the JSON text they are built as (spec 6.2).
-- Writes build `data` in the same statement as the change (ARCHITECTURE: one round trip per write),
-- as compact JSON in the documented key order; storing it as json keeps those bytes, which the
-- fan-out copies into the delivery body, instead of re-parsing them into jsonb on every event.
ALTER TABLE outbox ALTER COLUMN data TYPE json USING data::json;
