-- 0024_event_payload_text.sql: event payloads are stored as the text the writing statement built.
--
-- Every writer assembles each payload from values PostgreSQL itself turned into JSON (to_json, the records'
-- documents) or from JSON.stringify (Outbox.append), and every reader splices it into a larger JSON text
-- (fan-out, change feed). A `json` column parsed each payload again on insert, only to check what is valid by
-- construction: a nested create's job.created carries the whole job (≈ 15 KB), and the parse was ≈ 10 % of the
-- statement's backend CPU (measured: 1.60 → 1.43 ms per nested create). The key order stays the built one.
-- json to text is an I/O conversion, so this rewrites the event log once (time and disk in proportion to its size,
-- under an exclusive lock of the table: writes that log events wait for it).
-- The type change resets the column's compression to the default, and the rewritten rows are compressed with the
-- session's default: lz4 for both where the server has it (0023; PGlite has only pglz and refuses the setting).
DO $$
BEGIN
  BEGIN
    SET LOCAL default_toast_compression = lz4;
  EXCEPTION WHEN invalid_parameter_value THEN
    NULL;
  END;
  ALTER TABLE event_log ALTER COLUMN data TYPE text;
  BEGIN
    ALTER TABLE event_log ALTER COLUMN data SET COMPRESSION lz4;
  EXCEPTION WHEN feature_not_supported THEN
    NULL;
  END;
END $$;
