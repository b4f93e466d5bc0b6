-- 0026_time_entries_after_the_lock.sql: a move that ends an operation's running time entries reads them after it
-- holds the operation's row lock. The move is one statement (ARCHITECTURE 2), and a statement reads with the snapshot
-- it started with: when a concurrent start or resume had locked the operation and then committed a new entry, the
-- waiting pause, complete or PATCH got the operation's new row but did not see that entry. It completed the
-- operation and left the entry running, and actual_time did not count it (found by the lifecycle model test, two
-- moves at once on PostgreSQL). These functions are VOLATILE: in READ COMMITTED each of their queries takes a fresh
-- snapshot, and they run only for a row the statement has locked (as mes_roll_up_parts, 0014, does for parts).

-- The minutes of an operation's entries, those still running counted to now; `otherwise` when none is running
-- (its actual_time then stays as it is). An entry a concurrent start opened after this transaction's now() counts 0.
CREATE FUNCTION mes_entry_minutes(tenant uuid, operation uuid, otherwise float8) RETURNS float8
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM time_entries e WHERE e.tenant_id = tenant AND e.operation_id = operation AND e.end_time IS NULL) THEN
    RETURN otherwise;
  END IF;
  RETURN (SELECT coalesce(sum(CASE WHEN e.end_time IS NULL THEN greatest(extract(epoch FROM now() - e.start_time) / 60, 0) ELSE e.duration_minutes END), 0)
    FROM time_entries e WHERE e.tenant_id = tenant AND e.operation_id = operation);
END $$;

-- Ends the running entries of the operations `operations` (now, or at its start for an entry opened after this
-- transaction's now(), which then lasts 0 minutes); returns the ids of the entries it ended.
CREATE FUNCTION mes_end_time_entries(tenant uuid, operations uuid[]) RETURNS SETOF uuid
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
  UPDATE time_entries e SET end_time = greatest(now(), e.start_time),
    duration_minutes = greatest(extract(epoch FROM now() - e.start_time) / 60, 0), updated_at = now()
  WHERE e.tenant_id = tenant AND e.operation_id = ANY (operations) AND e.end_time IS NULL
  RETURNING e.id;
END $$;
