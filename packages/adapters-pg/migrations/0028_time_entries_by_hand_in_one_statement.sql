-- 0028_time_entries_by_hand_in_one_statement.sql: the sum of an operation's ended entries but one.
--
-- A time entry made, corrected or deleted by hand is one statement (ARCHITECTURE: the domain plans, the adapter
-- executes once): it locks the operation, writes the entry and sets the operation's actual_time. That UPDATE cannot
-- rely on seeing the entry its own statement wrote (the parts of one statement do not see each other's changes), so it
-- sums the other entries, read after the lock as in 0027, and adds the written entry's minutes itself.

-- The minutes of an operation's ended entries but `skip`, 0 when it has none.
CREATE FUNCTION mes_ended_minutes(tenant uuid, operation uuid, skip uuid) RETURNS float8
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (SELECT coalesce(sum(e.duration_minutes), 0) FROM time_entries e
    WHERE e.tenant_id = tenant AND e.operation_id = operation AND e.id <> skip);
END $$;
