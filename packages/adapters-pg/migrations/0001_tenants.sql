-- 0001_tenants.sql: tenants, their API keys, people (profiles) and work cells (spec 2.9, 5, DECISIONS).
-- Every tenant-owned table is keyed (tenant_id, id) and every reference carries tenant_id,
-- so a cross-tenant link cannot be stored even by a buggy caller.

-- 1. tenants: the isolation boundary; status 'active' on creation (DECISIONS)
CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL DEFAULT 'free' CONSTRAINT tenants_plan_check CHECK (plan IN ('free', 'pro', 'premium', 'enterprise')),
  status text NOT NULL DEFAULT 'active',
  current_month_parts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- 2. API keys: only the SHA-256 hash is stored; the prefix finds the candidate row (spec 5.3)
CREATE TABLE api_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  key_prefix text NOT NULL,
  key_hash text NOT NULL,
  environment text NOT NULL CONSTRAINT api_keys_environment_check CHECK (environment IN ('live', 'test')),
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  CONSTRAINT api_keys_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
);
CREATE INDEX api_keys_key_prefix_idx ON api_keys (key_prefix);

-- 3. profiles: operators and users that user_id / operator_id / assigned_operator_id reference
CREATE TABLE profiles (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  display_name text NOT NULL,
  email text,
  role text NOT NULL DEFAULT 'operator' CONSTRAINT profiles_role_check CHECK (role IN ('admin', 'operator')),
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT profiles_pkey PRIMARY KEY (tenant_id, id)
);
-- ids are UUIDs minted here; the bare-id index answers "which tenant owns this id" (403 vs 404)
CREATE UNIQUE INDEX profiles_id_key ON profiles (id);
CREATE UNIQUE INDEX profiles_tenant_email_key ON profiles (tenant_id, lower(email)) WHERE email IS NOT NULL;

-- 4. cells: work centres; operations reference them by id or, in ERP payloads, by name
CREATE TABLE cells (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  color text,
  sequence integer,
  active boolean NOT NULL DEFAULT true,
  external_id text,
  external_source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT cells_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT cells_tenant_name_key UNIQUE (tenant_id, name)
);
CREATE UNIQUE INDEX cells_id_key ON cells (id);
CREATE UNIQUE INDEX cells_tenant_external_key ON cells (tenant_id, external_source, external_id) WHERE external_id IS NOT NULL;
