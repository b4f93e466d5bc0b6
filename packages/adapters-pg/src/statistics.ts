// Planner statistics for a fresh database. Until a table is first analyzed, PostgreSQL costs every
// index that starts with tenant_id alike, so the foreign-key checks of a write may pick, say,
// (tenant_id, status) and read every part of the tenant to find one; each connection then keeps
// that plan. Autovacuum analyzes only after its naptime (a minute by default), by which time a
// first import has paid for it row by row (measured: 1.1 ms per check instead of 0.004 ms).
// So the migrator analyzes every table that was never analyzed (`analyzeFresh`: empty, that costs
// nothing, and from then on the planner sizes a table by its pages, so the first import's checks
// and lookups take the right index: 1,000 jobs × 5 × 4 as the first bulk sync of a fresh database
// timed out after 30 s before, and takes ≈ 2 s with it); and a serving process analyzes each table
// once more as soon as it holds committed rows, and again whenever its committed rows have grown
// eightfold since (for its first ten minutes; autovacuum takes over after its naptime). ANALYZE
// invalidates the cached plans of every connection: a foreign-key check planned while `jobs` had
// two pages (a sequential scan is cheapest there) was kept and read the whole table for every part
// of a create load (measured: 34 ms of a 45 ms statement after 10 s).
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { onOwnConnection } from "./connection.ts"
import { ident, literal } from "./sql-text.ts"

/** The tables requests write and read by the thousand. */
const TABLES = ["jobs", "parts", "operations", "time_entries", "issues", "substeps", "batches", "batch_operations",
  "cells", "profiles", "webhooks", "webhook_deliveries", "webhook_logs", "outbox", "event_log", "part_usage"]

/** A table this large (bytes) has enough rows for useful statistics. */
const MIN_BYTES = 2 * 8192

/** A table whose committed rows grew this many times since its last analysis is analyzed again. */
const GROWTH = 8

/**
 * One round of the watcher over `tables`: analyzes those without statistics of rows that hold committed rows,
 * and those whose committed rows (the statistics system's live count) grew GROWTH-fold since their last
 * analysis; true while some are left without statistics.
 */
const analyzeFilled = (tables: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const watched = yield* sql<{ name: string; known: boolean; ready: boolean }>`
      SELECT c.relname AS name, c.reltuples > 0 AS known,
        pg_relation_size(c.oid) >= ${MIN_BYTES} AND (c.reltuples <= 0 OR coalesce(s.n_live_tup, 0) >= ${GROWTH} * c.reltuples) AS ready
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
      LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE c.relkind = 'r' AND c.relname IN ${sql.in(tables)}`
    const sized = watched.filter((t) => t.ready && !t.known)
    // of those without statistics, the tables with a committed row (the size counts uncommitted rows too)
    const committed = sized.length === 0 ? [] : yield* sql.unsafe<{ name: string }>(
      sized.map((t) => `SELECT ${literal(t.name)} AS name WHERE EXISTS (SELECT 1 FROM ${ident(t.name)})`).join(" UNION ALL ")
    )
    const due = [...watched.filter((t) => t.ready && t.known).map((t) => t.name), ...committed.map((t) => t.name)]
    for (const name of due) yield* sql.unsafe(`ANALYZE ${ident(name)}`).raw
    return watched.filter((t) => !t.known).length > committed.length
  })

/** Rows inserted since a table's last vacuum that make a settled table worth vacuuming (and at least a tenth of it). */
const SETTLED_INSERTS = 500

/**
 * One round of the watcher's vacuums over `tables`: vacuums each table whose rows inserted since its last vacuum
 * (the statistics system's count) are at least SETTLED_INSERTS and a tenth of its rows, and did not change since the
 * previous round (`previous`, updated in place): a burst of inserts (an import, a first day's work) has settled. That
 * marks its pages all-visible, so a count or a lookup that an index answers reads no table pages (a list's count of
 * 2,000 jobs: 1.6 ms by a sequential scan of the wide rows, 0.45 ms by an index-only scan). Autovacuum does the same,
 * but only after its naptime and at a fifth of the table. Returns the tables vacuumed.
 */
const vacuumSettled = (tables: ReadonlyArray<string>, previous: Map<string, number>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const counts = yield* sql<{ name: string; inserted: number; live: number }>`
      SELECT relname AS name, n_ins_since_vacuum::float8 AS inserted, n_live_tup::float8 AS live
      FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ${sql.in(tables)}`
    const due = counts.filter((t) =>
      t.inserted >= SETTLED_INSERTS && t.inserted * 10 >= t.live && previous.get(t.name) === t.inserted
    ).map((t) => t.name)
    for (const t of counts) previous.set(t.name, t.inserted)
    for (const name of due) yield* sql.unsafe(`VACUUM ${ident(name)}`).raw
    return due
  })

export const PlannerStatistics = {
  /** One round of the serving process's watcher over the given tables (exported for tests). */
  analyzeFilled,
  /** One round of the serving process's vacuums over the given tables (exported for tests). */
  vacuumSettled,
  /** Analyzes the tables of the current schema that were never analyzed (the migrator runs it). */
  analyzeFresh: Effect.gen(function*() {
    const sql = yield* SqlClient
    const fresh = yield* sql<{ name: string }>`
      SELECT c.relname AS name
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
      WHERE c.relkind = 'r' AND c.reltuples < 0
      ORDER BY c.relname`
    if (fresh.length > 0) yield* sql.unsafe(`ANALYZE ${fresh.map((t) => ident(t.name)).join(", ")}`).raw
  }),
  /**
   * Watches, every second for 10 minutes, for tables that hold no statistics of rows yet (never analyzed, or analyzed
   * empty by the migrator) and analyzes each once it holds committed rows, and again as its committed rows grow
   * (GROWTH): the plans that connections cached on tiny tables are made again; and vacuums a table once a burst of
   * inserts into it has settled (vacuumSettled). Not before a row is committed: analyzed
   * while a first import's rows are still uncommitted, a table would count its pages but none of their rows, and the
   * import would plan for empty tables (measured: 27 s).
   */
  layer: Layer.effectDiscard(Effect.gen(function*() {
    const inserted = new Map<string, number>()
    // on a connection of its own: an ANALYZE or VACUUM that waits for a lock (autovacuum's, say) holds up no
    // request's statement pipelined behind it
    const round = onOwnConnection(yield* SqlClient)(Effect.andThen(analyzeFilled(TABLES), vacuumSettled(TABLES, inserted)))
    const watch = Effect.gen(function*() {
      while (true) {
        yield* round
        yield* Effect.sleep(Duration.seconds(1))
      }
    })
    yield* watch.pipe(
      Effect.timeout(Duration.minutes(10)),
      Effect.ignore,
      Effect.forkScoped
    )
  }))
}
