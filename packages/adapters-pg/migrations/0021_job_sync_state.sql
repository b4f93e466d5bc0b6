-- 0021_job_sync_state.sql: what the last bulk sync of a job record was, and the row versions it left
-- (issue 11: re-syncing unchanged records). A record sent again byte for byte whose job, parts and operations
-- (and the tenant's cells and materials, which names resolve against) are still the row versions that sync
-- left is unchanged without comparing a field: any write since, by anyone, makes a new row version (xmin).
-- The tokens are built in the statements (adapters-pg/src/stores/jobs.ts, syncStateToken).

CREATE TABLE job_sync_state (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  external_source text NOT NULL,
  external_id text NOT NULL,
  job_id uuid NOT NULL,
  -- SHA-256 of the record as the client sent it
  input_hash text NOT NULL,
  -- md5 over the ids and row versions of the job, its parts and operations, and the tenant's cells and materials
  state_token text NOT NULL,
  CONSTRAINT job_sync_state_pkey PRIMARY KEY (tenant_id, external_source, external_id)
);
