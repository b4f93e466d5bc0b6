-- 0033_batch_operations_after_the_lock.sql: a batch's operations as they are once the batch's lock is held.
--
-- A batch start and stop are one statement each (0032): the statement's UPDATE of the batch takes its row lock, then
-- the batch's operations are locked and moved. Read by the statement itself, the batch's operations were those of
-- its snapshot, taken before it waited for the batch's lock: an add-operations that held the lock and committed an
-- append meanwhile (in draft or ready, from which a start moves) left that operation out of the start, unstarted and
-- without its operator's entry, in a batch in progress. This function's query, run after the statement took the
-- batch's lock, has a snapshot of its own in READ COMMITTED (as 0026, 0031) and sees the append.

-- The batch's operations with their places in it. The caller holds the batch's row lock.
CREATE FUNCTION mes_batch_operations(tenant uuid, batch uuid) RETURNS TABLE (operation_id uuid, sequence integer)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY SELECT bo.operation_id, bo.sequence FROM batch_operations bo WHERE bo.tenant_id = tenant AND bo.batch_id = batch;
END $$;
