-- 0013_write_cost.sql: fewer indexes for every write to maintain (ARCHITECTURE: fast by construction).
-- A nested create writes 5 parts and 20 operations: each index on those tables costs every insert,
-- and every update that changes its column (actual_time and completion_percentage change on each
-- lifecycle move). The indexes below served only a sort across the whole tenant (or an ILIKE
-- filter, which a btree cannot serve); those lists now sort the tenant's matching rows, a top-N sort
-- that stays in the milliseconds at 100,000 operations (DECISIONS: list indexes).

-- 1. operations: sorts by sequence (across parts), estimated_time, actual_time, completion_percentage
DROP INDEX operations_tenant_sequence_idx;
DROP INDEX operations_tenant_estimated_idx;
DROP INDEX operations_tenant_actual_idx;
DROP INDEX operations_tenant_completion_idx;

-- 2. parts: sorts by part_number and quantity across jobs (a job's parts by number use
--    parts_job_part_number_key)
DROP INDEX parts_tenant_part_number_idx;
DROP INDEX parts_tenant_quantity_idx;

-- 3. parts: the exact material and lot filters (traceability) only index rows that have a value
DROP INDEX parts_tenant_material_idx;
DROP INDEX parts_tenant_material_lot_idx;
CREATE INDEX parts_tenant_material_idx ON parts (tenant_id, material) WHERE material IS NOT NULL;
CREATE INDEX parts_tenant_material_lot_idx ON parts (tenant_id, material_lot) WHERE material_lot IS NOT NULL;

-- 4. the outbox is a queue: the dispatcher reads it in id order and deletes what it fanned out (the
--    deliveries keep the body). Marking rows dispatched rewrote each event's payload in the WAL.
DROP INDEX outbox_tenant_idx;
ALTER TABLE outbox DROP COLUMN dispatched_at;

-- 5. ids made in SQL are time-ordered UUIDs (version 7, RFC 9562) like those of the domain: new keys
--    land at the right edge of their indexes instead of on a random page each
CREATE FUNCTION mes_uuid7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
    52, 1), 53, 1), 'hex')::uuid
$$;

-- 6. parts and operations reach their tenant through their job and part: (tenant_id, job_id) must
--    name a job of that tenant, and (tenant_id, part_id) a part of it, so a direct reference to
--    tenants checked (and share-locked the one tenant row) once more for every row of every write.
--    A tenant's deletion still removes them: tenant → jobs → parts → operations cascade. The outbox
--    is a queue its dispatcher empties; an event of a deleted tenant finds no webhook and goes.
ALTER TABLE parts DROP CONSTRAINT parts_tenant_id_fkey;
ALTER TABLE parts DROP CONSTRAINT parts_job_fkey;
ALTER TABLE parts ADD CONSTRAINT parts_job_fkey FOREIGN KEY (tenant_id, job_id) REFERENCES jobs (tenant_id, id) ON DELETE CASCADE;
ALTER TABLE operations DROP CONSTRAINT operations_tenant_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT outbox_tenant_id_fkey;

-- 7. a one-statement write that finds, after its checks, that it cannot finish as planned (a
--    concurrent writer moved a row it syncs) raises this, so that none of it is kept; it is a
--    unique violation of the pseudo-constraint mes_conflict, which the stores map to 409
CREATE FUNCTION mes_conflict(message text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'unique_violation', CONSTRAINT = 'mes_conflict', MESSAGE = message;
END $$;
