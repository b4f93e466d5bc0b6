-- 0005_list_indexes.sql: indexes for the remaining sorts and exact filters of spec 4.2 and 4.3,
-- so every sort a list offers can walk an index within the tenant.

-- 1. parts: sort by part_number and quantity across jobs
CREATE INDEX parts_tenant_part_number_idx ON parts (tenant_id, part_number);
CREATE INDEX parts_tenant_quantity_idx ON parts (tenant_id, quantity);

-- 2. operations: sort by sequence, estimated_time, actual_time, completion_percentage
CREATE INDEX operations_tenant_sequence_idx ON operations (tenant_id, sequence);
CREATE INDEX operations_tenant_estimated_idx ON operations (tenant_id, estimated_time_minutes);
CREATE INDEX operations_tenant_actual_idx ON operations (tenant_id, actual_time);
CREATE INDEX operations_tenant_completion_idx ON operations (tenant_id, completion_percentage);

-- 3. profiles and cells: list sorts
CREATE INDEX profiles_tenant_created_idx ON profiles (tenant_id, created_at, id);
CREATE INDEX cells_tenant_sequence_idx ON cells (tenant_id, sequence);
