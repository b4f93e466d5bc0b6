-- 0035_parent_chains_without_loops.sql: a parent change that would close a loop is refused by the database too.
--
-- A batch's parent_batch_id and a part's parent_part_id form chains; a write that sets a parent checks that the
-- record is not in the new parent's chain (the domain, and a batch PATCH's own statement). Two writes at once
-- could each pass that check against the other's old parent and close a loop between them: PATCH A {parent: B}
-- beside PATCH B {parent: A}. This trigger runs on every change of a parent to a new one (nothing else pays for it):
-- it waits for the tenant's other parent changes of that table to end (a transaction-level advisory lock: only
-- parent changes of one tenant and table wait on each other, as the invariant needs), then reads the new parent's
-- chain with a snapshot of its own (a VOLATILE function's query in READ COMMITTED, as 0026, 0031), which sees what
-- the earlier change committed. A loop is refused as the check violation `<table>_parent_cycle` (409 in the API:
-- a concurrent write overtook the request; nothing is written, and a retry is answered 422 CIRCULAR_REFERENCE).
CREATE FUNCTION mes_refuse_parent_loop() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  parent_column text := TG_ARGV[0];
  parent uuid := (to_jsonb(NEW) ->> parent_column)::uuid;
  loops boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(TG_TABLE_NAME || '.' || parent_column), hashtext(NEW.tenant_id::text));
  EXECUTE format(
    $q$WITH RECURSIVE chain (id, parent, depth) AS (
         SELECT t.id, t.%1$I, 0 FROM %2$I t WHERE t.tenant_id = $1 AND t.id = $2
         UNION ALL
         SELECT t.id, t.%1$I, c.depth + 1 FROM %2$I t JOIN chain c ON t.tenant_id = $1 AND t.id = c.parent WHERE c.depth < 1000
       ) SELECT EXISTS (SELECT 1 FROM chain WHERE chain.id = $3)$q$,
    parent_column, TG_TABLE_NAME)
    INTO loops USING NEW.tenant_id, parent, NEW.id;
  IF loops THEN
    RAISE EXCEPTION '% % would be its own ancestor', TG_TABLE_NAME, NEW.id
      USING ERRCODE = 'check_violation', CONSTRAINT = TG_TABLE_NAME || '_parent_cycle', TABLE = TG_TABLE_NAME;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER batches_parent_cycle BEFORE UPDATE OF parent_batch_id ON batches FOR EACH ROW
  WHEN (NEW.parent_batch_id IS NOT NULL AND NEW.parent_batch_id IS DISTINCT FROM OLD.parent_batch_id)
  EXECUTE FUNCTION mes_refuse_parent_loop('parent_batch_id');

CREATE TRIGGER parts_parent_cycle BEFORE UPDATE OF parent_part_id ON parts FOR EACH ROW
  WHEN (NEW.parent_part_id IS NOT NULL AND NEW.parent_part_id IS DISTINCT FROM OLD.parent_part_id)
  EXECUTE FUNCTION mes_refuse_parent_loop('parent_part_id');
