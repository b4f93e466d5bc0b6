-- 0030_issue_create_in_one_statement.sql: the next NCR number, for an issue create as one statement.
--
-- An NCR created without ncr_number takes the next NCR-<year>-NNNNN from its tenant's counter for the year (the one
-- row the spec lets NCR creates wait on), skipping numbers a client already gave an NCR (DECISIONS: numbering). The
-- create was a transaction of its own: bump the counter, look the number up (again for each number taken), insert,
-- write the events. Now the insert calls this function for its ncr_number: the counter's row lock is held to the end
-- of the create's transaction, and each look-up, a query of the function, has a snapshot of its own taken after the
-- lock (READ COMMITTED), so it sees what the lock's previous holder committed. The insert calls it only for a row it
-- writes: a create refused by its references takes no number.

CREATE FUNCTION mes_next_ncr_number(tenant uuid) RETURNS text
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  yr integer := extract(year FROM now() AT TIME ZONE 'UTC')::integer;
  n bigint;
  candidate text;
BEGIN
  LOOP
    INSERT INTO ncr_counters (tenant_id, year, last_value) VALUES (tenant, yr, 1)
      ON CONFLICT (tenant_id, year) DO UPDATE SET last_value = ncr_counters.last_value + 1
      RETURNING last_value INTO n;
    -- NCR-<year>-<sequence of at least five digits> (DECISIONS: numbering)
    candidate := 'NCR-' || yr || '-' || CASE WHEN n < 10000 THEN lpad(n::text, 5, '0') ELSE n::text END;
    IF NOT EXISTS (SELECT 1 FROM issues i WHERE i.tenant_id = tenant AND i.ncr_number = candidate) THEN
      RETURN candidate;
    END IF;
  END LOOP;
END $$;
