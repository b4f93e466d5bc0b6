-- 0039_job_deletes_and_batch_appends_meet_at_the_job.sql: a job's delete and an append of its operations to a batch,
-- at the same moment.
--
-- A job is not deleted while one of its operations is in a draft, ready or in-progress batch (409, DECISIONS: soft-
-- deleted jobs). Neither statement locked a row the other wrote, and each checked with the snapshot it started with:
-- a delete that committed while an add-operations or batch create ran left the hidden operation in the batch (the
-- append's snapshot still showed its job), and an append that committed while a delete ran went unseen by the
-- delete's check. Now they meet at the job's row, each reading after the lock with a snapshot of its own (READ
-- COMMITTED, as 0026, 0031 and 0033):
--   - the append takes a share lock on the jobs of the operations it appends, then refuses (nothing is written; 409,
--     retry it) when one of them is deleted. Appends of one job's operations do not wait for each other;
--   - the delete locks the job as its UPDATE would (its statement, FOR NO KEY UPDATE), then looks for the batches that
--     hold one of its operations (mes_job_held_by).

-- `ops`, once the jobs they belong to are share-locked and none of them is deleted: an add-operations and a batch
-- create pass their operations through it to mes_append_batch_operations (0031). Raises (nothing is written) when a
-- job was deleted after the statement's snapshot, which the statement's own check of the references could not see.
CREATE FUNCTION mes_operations_of_live_jobs(tenant uuid, ops uuid[]) RETURNS uuid[]
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  PERFORM 1 FROM jobs j
  WHERE j.tenant_id = tenant AND j.id IN (
    SELECT p.job_id FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
    WHERE o.tenant_id = tenant AND o.id = ANY (ops))
  ORDER BY j.id
  FOR SHARE OF j;
  IF EXISTS (
    SELECT 1 FROM operations o
      JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
      JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
    WHERE o.tenant_id = tenant AND o.id = ANY (ops) AND j.deleted_at IS NOT NULL
  ) THEN
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure', CONSTRAINT = 'batch_operations_job_deleted',
      MESSAGE = 'the job of an operation being added to a batch was deleted meanwhile';
  END IF;
  RETURN ops;
END $$;

-- The number of the first batch (by number) of those `statuses` that holds an operation of the job. The caller holds
-- the job's row lock.
CREATE FUNCTION mes_job_held_by(tenant uuid, job uuid, statuses text[]) RETURNS text
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (
    SELECT b.batch_number FROM parts p
      JOIN operations o ON o.tenant_id = p.tenant_id AND o.part_id = p.id
      JOIN batch_operations bo ON bo.tenant_id = o.tenant_id AND bo.operation_id = o.id
      JOIN batches b ON b.tenant_id = bo.tenant_id AND b.id = bo.batch_id
    WHERE p.tenant_id = tenant AND p.job_id = job AND b.status = ANY (statuses)
    ORDER BY b.batch_number LIMIT 1
  );
END $$;
