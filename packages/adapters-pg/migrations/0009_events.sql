-- 0009_events.sql: the transactional outbox and webhook delivery (spec 2.7, 4.9, 6).
-- Events are written in the same transaction as the change that causes them; a dispatcher fans
-- them out to subscribed webhooks and delivers with retries. Claims use FOR UPDATE SKIP LOCKED so
-- several server processes on one PostgreSQL share the work.

-- 1. the outbox: one row per event, in commit order of its id
CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  -- set once the event has been fanned out into deliveries
  dispatched_at timestamptz,
  CONSTRAINT outbox_event_id_key UNIQUE (event_id)
);
CREATE INDEX outbox_pending_idx ON outbox (id) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_tenant_idx ON outbox (tenant_id, occurred_at);

-- 2. webhook registrations; the secret signs deliveries and is never listed
CREATE TABLE webhooks (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,
  active boolean NOT NULL DEFAULT true,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhooks_pkey PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX webhooks_id_key ON webhooks (id);
CREATE INDEX webhooks_tenant_active_idx ON webhooks (tenant_id) WHERE active;

-- 3. deliveries: one per (event, webhook); its id is the X-Service-Delivery header, stable across retries.
--    The body is stored as sent, so every attempt carries the same bytes and signature.
CREATE TABLE webhook_deliveries (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  webhook_id uuid NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- a dispatcher's lease on an in-flight attempt; expired leases are claimable again
  locked_until timestamptz,
  last_status_code integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT webhook_deliveries_webhook_fkey FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_event_webhook_key UNIQUE (event_id, webhook_id)
);
CREATE UNIQUE INDEX webhook_deliveries_id_key ON webhook_deliveries (id);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- 4. every attempt, readable through /api-webhook-logs
CREATE TABLE webhook_logs (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  webhook_id uuid NOT NULL,
  delivery_id uuid NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL CONSTRAINT webhook_logs_status_check CHECK (status IN ('succeeded', 'failed', 'retrying')),
  status_code integer,
  duration_ms integer NOT NULL,
  error text,
  next_retry_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_logs_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT webhook_logs_webhook_fkey FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX webhook_logs_id_key ON webhook_logs (id);
CREATE INDEX webhook_logs_tenant_created_idx ON webhook_logs (tenant_id, created_at, id);
CREATE INDEX webhook_logs_webhook_idx ON webhook_logs (tenant_id, webhook_id, created_at);
CREATE INDEX webhook_logs_delivery_idx ON webhook_logs (tenant_id, delivery_id);
