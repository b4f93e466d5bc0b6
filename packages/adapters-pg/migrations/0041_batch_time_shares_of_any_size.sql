-- 0041_batch_time_shares_of_any_size.sql: a batch stop shares out any tracked time by any estimates.
--
-- mes_stop_batch_time (0032) failed, and with it the whole stop (a 500; the batch stayed in_progress for good), on
-- values each write accepts:
--   - estimates near the largest double (`estimated_time_minutes` 1e308 on two operations, or 1.7e308 on one): the
--     sum of the weights, or the tracked seconds × a weight, overflowed float8;
--   - an entry started more than about 68 years from now (a time correction is never refused, DECISIONS): its whole
--     seconds overflowed int4, in the function and in batch_time_shares;
--   - a weight tiny beside another (5e-324 beside 1e308, 1e-250 beside 1e100): its quotient underflowed to 0, which
--     PostgreSQL refuses ("value out of range: underflow").
-- The shares are the same as before for every value that worked (distributeBatchTime's, summed in order in float8,
-- which does the same): when the largest weight passes 2^510 the weights are multiplied by 2^-600 for the arithmetic
-- alone, a power of two, which leaves every product, sum and quotient as it would be without overflow; a weight below
-- 2^-900 of the largest (when that is 2^-100 or more) counts as 0 there, its share being far below a second. A weight
-- is recorded and answered as it is. Seconds are bigint.

ALTER TABLE batch_time_shares ALTER COLUMN tracked_seconds TYPE bigint, ALTER COLUMN share_seconds TYPE bigint;

-- distributeBatchTime (packages/domain/src/batches/time-shares.ts) in SQL: the shares of `tracked` seconds by
-- `estimates` (in batch order), one row each, `nth` its place. By estimate when every one is 0 or more and one is
-- above 0 (0032 asked that their sum be above 0: the same, without a sum that can overflow), else 1 each; each share
-- the floor of tracked × weight ÷ total, the seconds left over one each to the largest fractional parts, earlier
-- first on ties; float8, summed in order, with the weights scaled as above for the arithmetic.
CREATE FUNCTION mes_batch_time_shares(tracked bigint, estimates float8[])
RETURNS TABLE (nth bigint, basis text, weight float8, share bigint)
LANGUAGE sql IMMUTABLE AS $$
  WITH e AS (SELECT x.estimate, x.i FROM unnest(estimates) WITH ORDINALITY AS x (estimate, i)),
  b AS (SELECT coalesce(bool_and(e.estimate IS NOT NULL AND e.estimate >= 0) AND bool_or(e.estimate > 0), false) AS estimated, max(e.estimate) AS top FROM e),
  w AS (
    SELECT e.i, b.estimated, CASE WHEN b.estimated THEN e.estimate ELSE 1 END::float8 AS weight,
      CASE WHEN NOT b.estimated THEN 1
        WHEN b.top >= 2::float8 ^ -100 AND e.estimate < b.top * 2::float8 ^ -900 THEN 0
        WHEN b.top > 2::float8 ^ 510 THEN e.estimate * 2::float8 ^ -600
        ELSE e.estimate END::float8 AS scaled
    FROM e, b
  ),
  x AS (SELECT w.*, (tracked * w.scaled) / (SELECT sum(w2.scaled ORDER BY w2.i) FROM w w2) AS exact FROM w),
  f AS (SELECT x.*, floor(x.exact) AS whole, x.exact - floor(x.exact) AS frac FROM x)
  SELECT f.i, CASE WHEN f.estimated THEN 'estimated_time' ELSE 'equal' END, f.weight,
    (f.whole + CASE WHEN row_number() OVER (ORDER BY f.frac DESC, f.i) <= tracked - (SELECT sum(f2.whole) FROM f f2) THEN 1 ELSE 0 END)::bigint
  FROM f
$$;

-- As in 0032, with the tracked time (the longest open entry's whole seconds) in bigint and the shares of
-- mes_batch_time_shares.
CREATE OR REPLACE FUNCTION mes_stop_batch_time(tenant uuid, batch uuid, ops uuid[], OUT shares text, OUT recompute boolean)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  WITH e AS (
    SELECT e.id, e.operation_id, e.start_time, o.estimated_time_minutes AS estimate,
      row_number() OVER (ORDER BY bo.sequence, e.operation_id) AS i
    FROM time_entries e
    LEFT JOIN batch_operations bo ON bo.tenant_id = e.tenant_id AND bo.batch_id = e.batch_id AND bo.operation_id = e.operation_id
    LEFT JOIN operations o ON o.tenant_id = e.tenant_id AND o.id = e.operation_id
    WHERE e.tenant_id = tenant AND e.batch_id = batch AND e.end_time IS NULL
  ), s AS (
    SELECT e.id, e.operation_id, e.i, t.tracked, sh.basis, sh.weight, sh.share
    FROM (SELECT greatest(0, max(floor(extract(epoch FROM now() - e.start_time))))::bigint AS tracked,
        array_agg(e.estimate ORDER BY e.i) AS estimates FROM e) t
      CROSS JOIN mes_batch_time_shares(t.tracked, t.estimates) sh
      JOIN e ON e.i = sh.nth
  ), ended AS (
    UPDATE time_entries t SET end_time = now(), duration_minutes = s.share / 60::float8, updated_at = now()
    FROM s WHERE t.tenant_id = tenant AND t.id = s.id AND t.end_time IS NULL
  ), saved AS (
    INSERT INTO batch_time_shares (tenant_id, batch_id, operation_id, basis, weight, tracked_seconds, share_seconds)
    SELECT tenant, batch, s.operation_id, s.basis, s.weight, s.tracked, s.share FROM s
  )
  -- compact JSON text, as the event payloads it goes into (row_to_json writes no spaces, json_agg would)
  SELECT '[' || coalesce(string_agg(row_to_json(r)::text, ',' ORDER BY s.i), '') || ']', count(*) > 0
  INTO shares, recompute
  FROM s, LATERAL (SELECT s.operation_id, s.basis, s.weight, s.tracked AS tracked_seconds, s.share AS share_seconds,
    s.share / 60::float8 AS share_minutes) r;
  SELECT recompute OR count(*) > 0 INTO recompute FROM mes_end_time_entries(tenant, ops);
END $$;
