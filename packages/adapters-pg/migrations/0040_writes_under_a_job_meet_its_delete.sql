-- 0040_writes_under_a_job_meet_its_delete.sql: a write to a record under a job (a part, an operation, their time
-- entries, issues, substeps, quantities, images, assignments) and the job's delete, at the same moment.
--
-- The records under a soft-deleted job are gone with it (DECISIONS: soft-deleted jobs). A write checked that with the
-- snapshot its statement began with: a delete that committed while an operation's start, a time entry by hand or an
-- issue create ran (READ COMMITTED) left the write on the hidden operation, with its events. Now each such write meets
-- the delete at the job's row, as the batch appends of 0039 do: the delete locks the job (FOR NO KEY UPDATE), and the
-- write share-locks it and decides whether the job is live after the lock, in its one statement. Writes under one job
-- do not wait for each other (share locks); a write that waited for a delete that committed finds the job deleted and
-- writes nothing, answered as if it came after the delete (404 for the record, 422 for a reference); a delete that
-- waited for such a write deletes the job once the write committed. An operation's sync found its part by external key
-- without looking at the part's job, and wrote under a part of a deleted job even long after the delete: it now finds
-- only a part of a live job, after that job's share lock, as a part's sync finds its job.
--
-- A job's sync met the delete at the job's row already: its upsert locks the job it finds by its external key. One that
-- waited for the delete found the key free (its index holds live jobs only) and inserted in its place under the deleted
-- job's id, which jobs_pkey refused (a 500). That is now 409, nothing written, retry it (constraints.ts); retried, the
-- sync is answered as after the delete.

-- True when the tenant's job is live, with a share lock on its row held to the end of the transaction; NULL for no
-- job (NULL). READ COMMITTED: a job's delete holding the row is waited for, and the row is then checked again in its
-- newest version (a deleted job is not locked and is not live).
CREATE FUNCTION mes_job_live(tenant uuid, job uuid) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF job IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM jobs j WHERE j.tenant_id = tenant AND j.id = job AND j.deleted_at IS NULL FOR SHARE OF j;
  RETURN FOUND;
END $$;
