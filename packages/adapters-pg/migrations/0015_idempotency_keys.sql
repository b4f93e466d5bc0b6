-- 0015_idempotency_keys.sql: the answers of writes sent with an Idempotency-Key (issue 8). A row is written
-- in the transaction of the write it answers, so a key never exists without its effect nor an effect of a
-- keyed request without its key. Rows expire after MES_IDEMPOTENCY_TTL (default 24 h) and are purged.
CREATE TABLE idempotency_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  key text NOT NULL,
  -- sha-256 of method, path with query, and body: the same key with another request is refused
  fingerprint text NOT NULL,
  status integer NOT NULL,
  body bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
