-- 0025_doc_in_the_insert.sql: a stored record JSON (jobs, parts: 0010) comes with the insert that makes the row.
-- The statements that insert jobs and parts (insertSelect: nested create, sync, bulk sync) compute `doc` from the
-- very values they insert, with the same <table>_json function; the PL/pgSQL trigger that filled it, one call per
-- row, was ≈ 6 % of a nested create's PostgreSQL CPU. The insert trigger now runs only for a row that comes without
-- a doc (any other insert); every update still recomputes it.

-- the trigger function and its two triggers
CREATE FUNCTION mes_doc_triggers(tbl text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('CREATE OR REPLACE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.doc := %I(NEW); RETURN NEW; END $$',
    tbl || '_doc', tbl || '_json');
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', tbl || '_doc', tbl);
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', tbl || '_doc_insert', tbl);
  EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION %I()', tbl || '_doc', tbl, tbl || '_doc');
  EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %I FOR EACH ROW WHEN (NEW.doc IS NULL) EXECUTE FUNCTION %I()',
    tbl || '_doc_insert', tbl, tbl || '_doc');
END $f$;

-- the generator (0010) makes them from now on, so a later migration that refreshes a table's doc keeps the rule
CREATE OR REPLACE FUNCTION mes_materialize_record_json(tbl text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS doc text', tbl);
  PERFORM mes_doc_triggers(tbl);
  EXECUTE format('UPDATE %I SET doc = NULL', tbl);
END $f$;

-- the triggers alone here: the stored docs are current
SELECT mes_doc_triggers('jobs');
SELECT mes_doc_triggers('parts');
