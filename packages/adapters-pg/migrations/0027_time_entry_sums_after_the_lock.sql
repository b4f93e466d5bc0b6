-- 0027_time_entry_sums_after_the_lock.sql: the sums of an operation's time entries, read after its row lock.
--
-- 1. actual_time recomputed after an entry is made, corrected or deleted by hand summed the entries in a subquery of
--    the UPDATE that locks the operation. When a pause or complete held that lock, ended an entry and committed, the
--    waiting UPDATE got the operation's new row but summed with its statement's old snapshot, without the minutes of
--    that entry (0026 tells the same race for the moves). mes_ended_minutes is VOLATILE, so its query takes a fresh
--    snapshot, and the UPDATE calls it for the row it has locked.
-- 2. mes_entry_minutes (0026) read the entries twice, an EXISTS (a running entry?) and then the sum; one aggregate
--    answers both. No running entry (none at all: bool_or is NULL) still gives `otherwise`.

-- The minutes of an operation's ended entries (a running one has none yet), 0 when it has none.
CREATE FUNCTION mes_ended_minutes(tenant uuid, operation uuid) RETURNS float8
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (SELECT coalesce(sum(e.duration_minutes), 0) FROM time_entries e
    WHERE e.tenant_id = tenant AND e.operation_id = operation);
END $$;

CREATE OR REPLACE FUNCTION mes_entry_minutes(tenant uuid, operation uuid, otherwise float8) RETURNS float8
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (SELECT CASE WHEN bool_or(e.end_time IS NULL)
      THEN sum(CASE WHEN e.end_time IS NULL THEN greatest(extract(epoch FROM now() - e.start_time) / 60, 0) ELSE e.duration_minutes END)
      ELSE otherwise END
    FROM time_entries e WHERE e.tenant_id = tenant AND e.operation_id = operation);
END $$;
