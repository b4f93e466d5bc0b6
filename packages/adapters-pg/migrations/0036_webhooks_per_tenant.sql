-- 0036_webhooks_per_tenant.sql: the webhooks a tenant holds, counted exactly when two registrations arrive at once.
--
-- In a cloud deployment a registration is inserted only while its tenant holds fewer webhooks than the cap
-- (DECISIONS: Webhooks API): every event fans out to each of them, so their number bounds what one request can
-- make the dispatcher send. The count waits for the tenant's other capped registrations to end (a
-- transaction-level advisory lock: only registrations of one tenant wait on each other) and is read with a snapshot
-- of its own (a VOLATILE function's query in READ COMMITTED, as 0035), which sees what the earlier one committed.
CREATE FUNCTION mes_webhooks_held(tenant uuid) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  held bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('webhooks.held'), hashtext(tenant::text));
  SELECT count(*) INTO held FROM webhooks WHERE tenant_id = tenant;
  RETURN held;
END $$;
