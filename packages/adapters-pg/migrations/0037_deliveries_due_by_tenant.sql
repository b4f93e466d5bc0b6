-- 0037_deliveries_due_by_tenant.sql: due webhook deliveries found tenant by tenant.
--
-- The dispatcher's claim shares its workers between tenants (DECISIONS: Webhook delivery): it walks the tenants
-- with pending deliveries (a loose scan of this index, one probe per tenant) and takes each one's oldest due
-- deliveries (one range of it). The index on next_attempt_at alone served the claim that took the oldest due
-- deliveries of all tenants, and nothing else reads it.
DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_due_by_tenant_idx ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending';
