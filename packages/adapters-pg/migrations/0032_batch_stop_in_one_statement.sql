-- 0032_batch_stop_in_one_statement.sql: a stopped batch's tracked time shared out, for batch stop as one statement.
--
-- POST /api-batch-lifecycle/stop completes the batch and its operations and shares the time its entries tracked
-- across them (spec 3.3). It was a transaction of 17 round trips: the move, a lock of the operations, the open
-- entries read, the shares computed by the domain's distributeBatchTime, the entries ended, the shares saved, the
-- other running entries ended, the operations completed, their actual_time summed, the parts rolled up, the events,
-- the batch read back. The statement now moves the batch and locks its operations; this function, called for the
-- batch the statement moved, does the time: its queries take snapshots of their own (READ COMMITTED), so the entries
-- it reads and ends are those committed while the statement waited for its locks (0026 tells why that matters).
--
-- The shares are distributeBatchTime's (packages/domain/src/batches/time-shares.ts, the reference it is tested
-- against): the tracked seconds are the longest open entry's, whole seconds; the weights are the operations'
-- estimated_time_minutes when every one has an estimate of 0 or more and they sum above 0, else 1 each; each share
-- is the floor of tracked × weight ÷ total, and the seconds left over go one each to the largest fractional parts,
-- earlier entries (batch order) first on ties. The arithmetic is float8, as JavaScript's numbers, summed in order.

-- Ends the batch's open entries with their shares (answered as the API's time_distribution, in batch order) and
-- saves the shares; then ends every other running entry of `ops`. `recompute`: whether any entry ended, so the
-- operations' actual_time must be summed again.
CREATE FUNCTION mes_stop_batch_time(tenant uuid, batch uuid, ops uuid[], OUT shares text, OUT recompute boolean)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  WITH e AS (
    SELECT e.id, e.operation_id, floor(extract(epoch FROM now() - e.start_time))::int AS elapsed,
      o.estimated_time_minutes AS estimate, row_number() OVER (ORDER BY bo.sequence, e.operation_id) AS i
    FROM time_entries e
    LEFT JOIN batch_operations bo ON bo.tenant_id = e.tenant_id AND bo.batch_id = e.batch_id AND bo.operation_id = e.operation_id
    LEFT JOIN operations o ON o.tenant_id = e.tenant_id AND o.id = e.operation_id
    WHERE e.tenant_id = tenant AND e.batch_id = batch AND e.end_time IS NULL
  ), basis AS (
    SELECT greatest(0, max(e.elapsed)) AS tracked,
      bool_and(e.estimate IS NOT NULL AND e.estimate >= 0) AND sum(coalesce(e.estimate, 0) ORDER BY e.i) > 0 AS estimated
    FROM e
  ), w AS (
    SELECT e.id, e.operation_id, e.i, b.tracked, b.estimated, CASE WHEN b.estimated THEN e.estimate ELSE 1 END::float8 AS weight
    FROM e, basis b
  ), x AS (
    SELECT w.*, (w.tracked * w.weight) / (SELECT sum(w2.weight ORDER BY w2.i) FROM w w2) AS exact FROM w
  ), f AS (
    SELECT x.*, floor(x.exact) AS whole, x.exact - floor(x.exact) AS frac FROM x
  ), s AS (
    SELECT f.*, (f.whole + CASE WHEN row_number() OVER (ORDER BY f.frac DESC, f.i) <= f.tracked - (SELECT sum(f2.whole) FROM f f2) THEN 1 ELSE 0 END)::int AS share
    FROM f
  ), ended AS (
    UPDATE time_entries t SET end_time = now(), duration_minutes = s.share / 60::float8, updated_at = now()
    FROM s WHERE t.tenant_id = tenant AND t.id = s.id AND t.end_time IS NULL
  ), saved AS (
    INSERT INTO batch_time_shares (tenant_id, batch_id, operation_id, basis, weight, tracked_seconds, share_seconds)
    SELECT tenant, batch, s.operation_id, CASE WHEN s.estimated THEN 'estimated_time' ELSE 'equal' END, s.weight, s.tracked, s.share FROM s
  )
  -- compact JSON text, as the event payloads it goes into (row_to_json writes no spaces, json_agg would)
  SELECT '[' || coalesce(string_agg(row_to_json(r)::text, ',' ORDER BY s.i), '') || ']', count(*) > 0
  INTO shares, recompute
  FROM s, LATERAL (SELECT s.operation_id, CASE WHEN s.estimated THEN 'estimated_time' ELSE 'equal' END AS basis, s.weight,
    s.tracked AS tracked_seconds, s.share AS share_seconds, s.share / 60::float8 AS share_minutes) r;
  SELECT recompute OR count(*) > 0 INTO recompute FROM mes_end_time_entries(tenant, ops);
END $$;
