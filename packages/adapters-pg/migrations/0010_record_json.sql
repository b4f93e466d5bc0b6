-- 0010_record_json.sql: records as JSON, built by PostgreSQL (ARCHITECTURE: reads come out of
-- PostgreSQL as JSON). For every table the API shows, <table>_json(r) returns the record exactly
-- as the API has always written it: every column in table order, timestamps as ISO 8601 UTC with
-- milliseconds (JavaScript's Date#toISOString), minus hidden columns, plus per-table extras.
-- Responses, reads and event payloads all use these functions, so the wire format has one home.
-- jobs and parts also keep their JSON in a `doc` column, kept current by a trigger: a list of 100
-- jobs carries 500 parts, and concatenating stored text is several times cheaper than formatting
-- 600 rows on every request. A migration that changes a table's columns calls
-- mes_define_record_json for it again (and, for jobs and parts, refreshes doc).

-- 1. timestamps as the API writes them
CREATE FUNCTION mes_ts(timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- 2. the generator: a composite type <table>_wire with the record's fields (so row_to_json writes
--    compact JSON under the right keys) and an inlinable <table>_json(<table>) over it.
--    fields: rows of {name, type, expression over r}, in the order the record shows them
CREATE FUNCTION mes_define_record_json_as(tbl text, fields text[]) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  cols text := '';
  vals text := '';
  field text[];
BEGIN
  FOREACH field SLICE 1 IN ARRAY fields LOOP
    cols := cols || CASE WHEN cols = '' THEN '' ELSE ', ' END || format('%I %s', field[1], field[2]);
    vals := vals || CASE WHEN vals = '' THEN '' ELSE ', ' END || field[3];
  END LOOP;
  EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', tbl || '_wire');
  EXECUTE format('CREATE TYPE %I AS (%s)', tbl || '_wire', cols);
  EXECUTE format('CREATE OR REPLACE FUNCTION %I(r %I) RETURNS text LANGUAGE sql STABLE AS $$ SELECT row_to_json(ROW(%s)::%I)::text $$',
    tbl || '_json', tbl, vals, tbl || '_wire');
END $f$;

-- the common case: every column in table order (timestamps formatted), minus hidden, plus extras
CREATE FUNCTION mes_define_record_json(tbl text, hidden text[] DEFAULT '{}', extras text[] DEFAULT '{}')
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  fields text[];
BEGIN
  SELECT array_agg(ARRAY[attname::text,
           CASE WHEN atttypid = 'timestamptz'::regtype THEN 'text' ELSE format_type(atttypid, atttypmod) END,
           CASE WHEN atttypid = 'timestamptz'::regtype THEN format('mes_ts(r.%I)', attname) ELSE format('r.%I', attname) END]
           ORDER BY attnum)
    INTO fields
    FROM pg_attribute
   WHERE attrelid = tbl::regclass AND attnum > 0 AND NOT attisdropped AND attname <> ALL (hidden || ARRAY['doc']);
  PERFORM mes_define_record_json_as(tbl, fields || extras);
END $f$;

-- 3. a stored copy of the JSON, kept current on every insert and update
CREATE FUNCTION mes_materialize_record_json(tbl text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS doc text', tbl);
  EXECUTE format('CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.doc := %I(NEW); RETURN NEW; END $$',
    tbl || '_doc', tbl || '_json');
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', tbl || '_doc', tbl);
  EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION %I()', tbl || '_doc', tbl, tbl || '_doc');
  EXECUTE format('UPDATE %I SET doc = NULL', tbl);
END $f$;

-- 4. every record the API shows
SELECT mes_define_record_json('jobs');
SELECT mes_define_record_json('parts');
SELECT mes_define_record_json('operations');
SELECT mes_define_record_json('cells');
SELECT mes_define_record_json('profiles');
SELECT mes_define_record_json('time_entries');
SELECT mes_define_record_json('substeps');
SELECT mes_define_record_json('webhook_logs');
-- no secret (shown on create only, spec 4.9); `event_type` names the event of a single-event subscription
SELECT mes_define_record_json_as('webhooks', ARRAY[
  ['id', 'uuid', 'r.id'], ['tenant_id', 'uuid', 'r.tenant_id'], ['url', 'text', 'r.url'], ['events', 'text[]', 'r.events'],
  ['event_type', 'text', 'CASE WHEN cardinality(r.events) = 1 THEN r.events[1] END'], ['active', 'boolean', 'r.active'],
  ['description', 'text', 'r.description'], ['created_at', 'text', 'mes_ts(r.created_at)'], ['updated_at', 'text', 'mes_ts(r.updated_at)']]);
-- DECISIONS: issue responses also carry `disposition`
SELECT mes_define_record_json('issues', '{}', ARRAY[['disposition', 'text', 'r.ncr_disposition']]);
-- a batch lists its operations in batch order
SELECT mes_define_record_json('batches', '{}', ARRAY[['operation_ids', 'uuid[]',
  'ARRAY(SELECT bo.operation_id FROM batch_operations bo WHERE bo.tenant_id = r.tenant_id AND bo.batch_id = r.id ORDER BY bo.sequence)']]);

-- 5. stored JSON for the records lists carry by the hundred
SELECT mes_materialize_record_json('jobs');
SELECT mes_materialize_record_json('parts');
