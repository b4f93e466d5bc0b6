-- 0022_part_images.sql: images attached to parts (spec 4.12; issue 12). The file lives in the storage (a local
-- directory by default) under `storage_key`; the row says which part it shows and whether it is the primary one.

CREATE TABLE part_images (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  part_id uuid NOT NULL,
  storage_key text NOT NULL,
  file_name text,
  content_type text NOT NULL
    CONSTRAINT part_images_content_type_check CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp', 'image/gif')),
  size_bytes integer NOT NULL CONSTRAINT part_images_size_check CHECK (size_bytes >= 0),
  caption text,
  is_primary boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT part_images_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT part_images_part_fkey FOREIGN KEY (tenant_id, part_id) REFERENCES parts (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT part_images_storage_key_key UNIQUE (tenant_id, storage_key),
  -- one primary image per part; checked at commit, so one statement can move it from one image to another
  CONSTRAINT part_images_one_primary EXCLUDE USING btree (tenant_id WITH =, part_id WITH =) WHERE (is_primary) DEFERRABLE INITIALLY DEFERRED
);
CREATE UNIQUE INDEX part_images_id_key ON part_images (id);
CREATE INDEX part_images_part_idx ON part_images (tenant_id, part_id, created_at);
CREATE INDEX part_images_tenant_created_idx ON part_images (tenant_id, created_at, id);
SELECT mes_define_record_json('part_images');
