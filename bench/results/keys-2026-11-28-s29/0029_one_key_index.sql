-- 0029_one_key_index.sql: one index for a record's key instead of two.
--
-- Every tenant table had a primary key on (tenant_id, id), which the composite foreign keys of tenant isolation
-- reference, and beside it a unique index on (id) alone, for lookups by id without the tenant (404 against 403).
-- A primary key on (id, tenant_id) serves both: PostgreSQL lets a foreign key on (tenant_id, id) reference it (the
-- columns match as a set), and id leads it. Ids are made by mes (UUIDv7), never taken from a request, so (id) alone
-- stays unique by construction. A nested create of 1 job x 5 parts x 4 operations wrote 154 index entries and 29 KB of
-- WAL, 26 entries and 2 KB of them in these second indexes (bench/results/wal-2026-11-28-s29).
--
-- For each table with both: the foreign keys that reference its primary key are noted, dropped with it, and added
-- again, unchanged, once the new key is there (their names are the API's, constraints.ts maps them to errors).
DO $$
DECLARE
  t record;
  fks text[];
  stmt text;
BEGIN
  FOR t IN
    SELECT c.oid, c.relname, pk.conname AS pkey, pk.conindid AS pkey_index
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
    JOIN pg_constraint pk ON pk.conrelid = c.oid AND pk.contype = 'p'
    WHERE c.relkind = 'r'
      AND pk.conkey = ARRAY[(SELECT attnum FROM pg_attribute WHERE attrelid = c.oid AND attname = 'tenant_id'),
                            (SELECT attnum FROM pg_attribute WHERE attrelid = c.oid AND attname = 'id')]::int2[]
      AND EXISTS (SELECT 1 FROM pg_class i WHERE i.relname = c.relname || '_id_key' AND i.relnamespace = n.oid)
    ORDER BY c.relname
  LOOP
    fks := ARRAY(
      SELECT format('ALTER TABLE %s ADD CONSTRAINT %I %s', f.conrelid::regclass, f.conname, pg_get_constraintdef(f.oid))
      FROM pg_constraint f WHERE f.contype = 'f' AND f.conindid = t.pkey_index ORDER BY f.conname
    );
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I CASCADE', t.relname, t.pkey);
    EXECUTE format('DROP INDEX %I', t.relname || '_id_key');
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id, tenant_id)', t.relname, t.pkey);
    FOREACH stmt IN ARRAY fks LOOP
      EXECUTE stmt;
    END LOOP;
  END LOOP;
END $$;
