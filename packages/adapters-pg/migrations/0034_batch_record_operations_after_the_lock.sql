-- 0034_batch_record_operations_after_the_lock.sql: a batch's record lists its operations as they are when it is built.
--
-- batches_json(r) listed `operation_ids` with a subquery, which reads with the snapshot of the statement that calls
-- it. A batch start or stop (or a PATCH to ready or cancelled) that waited for the batch's row lock built the batch's
-- record, for its answer and its event (batch.started, batch.completed), from a snapshot taken before that wait: an
-- operation that an add-operations appended and committed meanwhile was missing from the record, though the start
-- (0033) started it. The list is now read by mes_batch_operations (0033), VOLATILE, whose query takes a snapshot of
-- its own (READ COMMITTED). The record's fields and their order are unchanged.
SELECT mes_define_record_json('batches', '{}', ARRAY[['operation_ids', 'uuid[]',
  'ARRAY(SELECT bo.operation_id FROM mes_batch_operations(r.tenant_id, r.id) bo ORDER BY bo.sequence)']]);
