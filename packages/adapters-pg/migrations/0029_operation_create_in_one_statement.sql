-- 0029_operation_create_in_one_statement.sql: the next sequence of a part's operations, for a create as one statement.
--
-- POST /api-operations without `sequence` numbers the operation after its part's last (spec 2.3), and concurrent
-- creates on one part must get distinct consecutive numbers. The create was a transaction of its own: lock the part,
-- read the highest sequence, insert (plus its reference checks): four round trips more than its statement. One
-- statement cannot do it with a subquery: the statement's snapshot is taken before it waits for the part's lock, so it
-- would not see the operation that the lock's previous holder just committed. A function's own query, run after it
-- took the lock, has a snapshot of its own in READ COMMITTED, and sees it.

-- The sequence after the part's highest, taken under the part's row lock (held to the end of the transaction).
-- Past the largest int4 it raises a unique violation of the pseudo-constraint operations_sequence_exhausted (409).
CREATE FUNCTION mes_next_operation_sequence(tenant uuid, part uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  after bigint;
BEGIN
  PERFORM 1 FROM parts p WHERE p.tenant_id = tenant AND p.id = part FOR UPDATE;
  SELECT coalesce(max(o.sequence), 0)::bigint + 1 INTO after FROM operations o WHERE o.tenant_id = tenant AND o.part_id = part;
  IF after > 2147483647 THEN
    RAISE EXCEPTION USING ERRCODE = 'unique_violation', CONSTRAINT = 'operations_sequence_exhausted',
      MESSAGE = 'the part''s operations already use sequence 2147483647';
  END IF;
  RETURN after;
END $$;
