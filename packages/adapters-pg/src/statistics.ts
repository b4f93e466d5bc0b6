// Planner statistics for a fresh database. Until a table is first analyzed, PostgreSQL costs every
// index that starts with tenant_id alike, so the foreign-key checks of a write may pick, say,
// (tenant_id, status) and read every part of the tenant to find one; each connection then keeps
// that plan. Autovacuum analyzes only after its naptime (a minute by default), by which time a
// first import has paid for it row by row (measured: 1.1 ms per check instead of 0.004 ms). So a
// serving process analyzes each table once, as soon as it holds data, and then leaves it to
// autovacuum. ANALYZE invalidates the cached plans of every connection.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { ident } from "./sql-text.ts"

/** The tables requests write and read by the thousand. */
const TABLES = ["jobs", "parts", "operations", "time_entries", "issues", "substeps", "batches", "batch_operations",
  "cells", "profiles", "webhooks", "webhook_deliveries", "webhook_logs", "outbox", "part_usage"]

/** A never-analyzed table this large (bytes) has enough rows for useful statistics. */
const MIN_BYTES = 2 * 8192

export const PlannerStatistics = {
  /** Watches for tables that were never analyzed and analyze them once they hold data (for 10 minutes). */
  layer: Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient
    const pending = sql<{ name: string; ready: boolean }>`
      SELECT c.relname AS name, pg_relation_size(c.oid) >= ${MIN_BYTES} AS ready
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
      WHERE c.relkind = 'r' AND c.reltuples < 0 AND c.relname IN ${sql.in(TABLES)}`
    const round = Effect.gen(function*() {
      const tables = yield* pending
      for (const t of tables) if (t.ready) yield* sql.unsafe(`ANALYZE ${ident(t.name)}`).raw
      return tables.some((t) => !t.ready)
    })
    const watch = Effect.gen(function*() {
      while (yield* round) yield* Effect.sleep(Duration.seconds(1))
    })
    yield* watch.pipe(
      Effect.timeout(Duration.minutes(10)),
      Effect.ignore,
      Effect.forkScoped
    )
  }))
}
