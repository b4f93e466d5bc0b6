-- 0031_batch_add_operations_in_one_statement.sql: appending operations to a batch, for add-operations as one statement.
--
-- POST /api-batch-lifecycle/add-operations appends the operations after the batch's last (spec 3.3) and answers the
-- batch with all of its operations in order. It was a transaction of its own: lock the batch, read its last sequence,
-- insert, touch the batch, read it back (and four reads before that). One statement cannot read the last sequence with
-- a subquery: its snapshot is taken before it waits for the batch's lock, so it would not see the operations that the
-- lock's previous holder just appended. A function's own queries, run after the statement took the lock, have
-- snapshots of their own in READ COMMITTED, and see them.

-- Appends `ops` in order after the batch's highest sequence and answers all of the batch's operations in order. The
-- caller holds the batch's row lock (the statement's UPDATE of the batch), so appends to one batch do not interleave.
CREATE FUNCTION mes_append_batch_operations(tenant uuid, batch uuid, ops uuid[]) RETURNS uuid[]
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  INSERT INTO batch_operations (tenant_id, batch_id, operation_id, sequence)
  SELECT tenant, batch, o.id,
    (SELECT coalesce(max(bo.sequence), 0) FROM batch_operations bo WHERE bo.tenant_id = tenant AND bo.batch_id = batch) + o.n
  FROM unnest(ops) WITH ORDINALITY AS o (id, n);
  RETURN ARRAY(SELECT bo.operation_id FROM batch_operations bo WHERE bo.tenant_id = tenant AND bo.batch_id = batch ORDER BY bo.sequence);
END $$;
