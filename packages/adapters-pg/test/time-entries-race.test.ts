// Time entries under concurrency (spec 2.8, 3.2, 3.3): a move that ends an operation's running entries and a
// move that opens one, at the same time on different connections. Whichever wins the operation's row lock,
// an operation that ends on_hold or completed has no running entry, and its actual_time is the sum of its
// ended entries (migration 0026; found by the lifecycle model test).
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Batches, Jobs, JsonText, Operations, Tenants, TimeEntries } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, held, someoneWaits, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default), as under load
const run = useDomainApp()

const ROUNDS = 15

/** Exits that are neither a success nor a refusal (a defect: a deadlock would be a 500), as text. */
const defects = (exits: ReadonlyArray<Exit.Exit<unknown, unknown>>) =>
  exits.flatMap((e) => (Exit.isFailure(e) && Cause.hasDies(e.cause) ? [Cause.pretty(e.cause)] : []))

/** A tenant of its own with an operator (Olga) and a cell; `operation` makes an operation alone on its part. */
const scene = async (name: string) => {
  const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name })))
  const as = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, effect))
  /** A move of a race: refused (409) when the other one won, which is fine. */
  const race = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, Effect.exit(effect)))
  const [olga, cell] = await run(Effect.gen(function*() {
    const sql = yield* SqlClient
    const [p] = yield* sql<{ id: string }>`INSERT INTO profiles (tenant_id, id, display_name) VALUES (${tenant.id}, gen_random_uuid(), 'Olga') RETURNING id`
    const [c] = yield* sql<{ id: string }>`INSERT INTO cells (tenant_id, id, name) VALUES (${tenant.id}, gen_random_uuid(), 'Saw') RETURNING id`
    return [p!.id, c!.id] as const
  }))
  let n = 0
  /** A new operation, moved first by `before` (a start by `startedBy` when given: an entry of theirs running). */
  const operation = async (before: ReadonlyArray<"start" | "pause"> = [], startedBy?: string) => {
    const job = await as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: `R-${++n}`, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "a", sequence: 1 }] }] })))
    const id = job.parts[0]!.operations[0]!.operation_id
    for (const action of before) await as(Effect.flatMap(Effect.service(Operations), (o) => o.transition(id, action, action === "start" ? startedBy : undefined)))
    return id
  }
  return { tenant, as, race, olga, cell, operation }
}

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("time entries under concurrency", () => {
  it("an end and an open at once never leave a running entry on a paused or completed operation", async () => {
    const { tenant, as, race, olga, cell, operation } = await scene("Entry race")
    const operations = Effect.service(Operations)
    const ids: Array<string> = []
    for (let k = 0; k < ROUNDS; k++) {
      // start (opens) against PATCH completed, PATCH paused and, from on_hold, resume against PATCH completed
      const a = await operation()
      const b = await operation()
      const c = await operation(["start", "pause"])
      // a batch start (opens on every unfinished operation) against a complete of one of them
      const d = await operation(["start"])
      const batch = await as(Effect.flatMap(Effect.service(Batches), (s) => s.create({ batch_number: `EB-${k}`, cell_id: cell, operation_ids: [d] })))
      // a batch stop (completes its operations) against a resume of one of them that is on hold
      const e = await operation()
      const stopping = await as(Effect.flatMap(Effect.service(Batches), (s) => s.create({ batch_number: `ES-${k}`, cell_id: cell, operation_ids: [e] })))
      await as(Effect.flatMap(Effect.service(Batches), (s) => s.transition(stopping.id, "start", {})))
      await as(Effect.flatMap(operations, (o) => o.transition(e, "pause")))
      // a batch stop (ends the batch's entries, then completes) against a PATCH completed of its operation, which
      // locks the operation and then ends its entries: each once waited for the other (a deadlock, a 500)
      // (six a round, the PATCH 0-5 ms after the stop, so that some land between its statements)
      const fs: Array<{ readonly op: string; readonly batch: string }> = []
      for (let j = 0; j < 6; j++) {
        const op = await operation()
        const ending = await as(Effect.flatMap(Effect.service(Batches), (s) => s.create({ batch_number: `EF-${k}-${j}`, cell_id: cell, operation_ids: [op] })))
        await as(Effect.flatMap(Effect.service(Batches), (s) => s.transition(ending.id, "start", { operator_id: olga })))
        fs.push({ op, batch: ending.id })
      }
      const exits = await Promise.all([
        ...fs.flatMap((f, j) => [
          race(Effect.flatMap(Effect.service(Batches), (s) => s.transition(f.batch, "stop", {}))),
          race(Effect.flatMap(operations, (o) => Effect.andThen(Effect.sleep(`${j} millis`), o.update(f.op, { status: "completed" }))))
        ]),
        race(Effect.flatMap(Effect.service(Batches), (s) => s.transition(stopping.id, "stop", {}))),
        race(Effect.flatMap(operations, (o) => o.transition(e, "resume", olga))),
        race(Effect.flatMap(operations, (o) => o.transition(a, "start", olga))),
        race(Effect.flatMap(operations, (o) => o.update(a, { status: "completed" }))),
        race(Effect.flatMap(operations, (o) => o.transition(b, "start", olga))),
        race(Effect.flatMap(operations, (o) => o.update(b, { status: "paused" }))),
        race(Effect.flatMap(operations, (o) => o.transition(c, "resume", olga))),
        race(Effect.flatMap(operations, (o) => o.update(c, { status: "completed" }))),
        race(Effect.flatMap(Effect.service(Batches), (s) => s.transition(batch.id, "start", { operator_id: olga }))),
        race(Effect.flatMap(operations, (o) => o.transition(d, "complete")))
      ])
      expect(defects(exits)).toEqual([])
      ids.push(a, b, c, d, e, ...fs.map((f) => f.op))
    }
    const rows = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ id: string; status: string; running: number; actual_time: number; ended: number | null; entries: number }>`
        SELECT o.id, o.status, o.actual_time,
          (SELECT count(*)::int FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id AND e.end_time IS NULL) AS running,
          (SELECT count(*)::int FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id) AS entries,
          (SELECT sum(e.duration_minutes) FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id AND e.end_time IS NOT NULL) AS ended
        FROM operations o WHERE o.tenant_id = ${tenant.id} AND o.id IN ${sql.in(ids)}`
    }))
    expect(rows).toHaveLength(ids.length)
    // the race happened: some operations got an entry and still ended paused or completed
    expect(rows.filter((r) => r.status !== "in_progress" && r.entries > 0).length).toBeGreaterThan(0)
    expect(rows.filter((r) => r.status !== "in_progress" && r.running > 0)).toEqual([])
    for (const r of rows.filter((r) => r.entries > 0 && r.running === 0)) expect(r.actual_time).toBeCloseTo(Number(r.ended ?? 0), 9)
  })

  it("an entry made or corrected by hand at once with a move keeps actual_time the sum and opens nothing on a finished operation", async () => {
    const { tenant, as, race, olga, cell, operation } = await scene("Manual entry race")
    const operations = Effect.service(Operations)
    const entries = Effect.service(TimeEntries)
    /** A new operation, started by Olga (her entry running). */
    const running = () => operation(["start"], olga)
    const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString()
    const ids: Array<string> = []
    let refused = 0
    for (let k = 0; k < ROUNDS; k++) {
      // a closed entry by hand against a pause and a complete (each ends Olga's entry and sums the operation)
      const a = await running()
      const b = await running()
      // an open entry by hand against a complete and a pause
      const c = await running()
      const d = await running()
      // an ended entry reopened by hand against a complete
      const e = await running()
      const closed = await as(Effect.flatMap(entries, (t) => t.create({ operation_id: e, start_time: hourAgo(), end_time: new Date().toISOString() })))
      // a running entry deleted, and one corrected, by hand against a pause and a complete: the move locks the
      // operation and then ends the entry, so the correction must not take the entry first (a deadlock, a 500)
      const f = await running()
      const gone = await as(Effect.flatMap(entries, (t) => t.create({ operation_id: f, start_time: hourAgo() })))
      const g = await running()
      const fixed = await as(Effect.flatMap(entries, (t) => t.create({ operation_id: g, start_time: hourAgo() })))
      // an ended entry by hand against a batch stop of its operation: the entry's insert holds a key-share lock on
      // the operation (its foreign key) and its recompute then locks it; the stop locks it first, then completes it
      const stops: Array<{ readonly op: string; readonly batch: string }> = []
      for (let j = 0; j < 3; j++) {
        const op = await running()
        const batch = await as(Effect.flatMap(Effect.service(Batches), (s) => s.create({ batch_number: `MS-${k}-${j}`, cell_id: cell, operation_ids: [op] })))
        await as(Effect.flatMap(Effect.service(Batches), (s) => s.transition(batch.id, "start", {})))
        stops.push({ op, batch: batch.id })
      }
      const stopExits = Promise.all(stops.flatMap((x, j) => [
        race(Effect.flatMap(Effect.service(Batches), (s) => s.transition(x.batch, "stop", {}))),
        race(Effect.flatMap(entries, (t) => Effect.andThen(Effect.sleep(`${j} millis`), t.create({ operation_id: x.op, start_time: hourAgo(), end_time: new Date().toISOString() }))))
      ]))
      const exits = await Promise.all([
        race(Effect.flatMap(entries, (t) => t.create({ operation_id: a, start_time: hourAgo(), end_time: new Date().toISOString() }))),
        race(Effect.flatMap(operations, (o) => o.transition(a, "pause"))),
        race(Effect.flatMap(entries, (t) => t.create({ operation_id: b, start_time: hourAgo(), end_time: new Date().toISOString() }))),
        race(Effect.flatMap(operations, (o) => o.transition(b, "complete"))),
        race(Effect.flatMap(entries, (t) => t.create({ operation_id: c, start_time: hourAgo() }))),
        race(Effect.flatMap(operations, (o) => o.transition(c, "complete"))),
        race(Effect.flatMap(entries, (t) => t.create({ operation_id: d, start_time: hourAgo() }))),
        race(Effect.flatMap(operations, (o) => o.transition(d, "pause"))),
        race(Effect.flatMap(entries, (t) => t.update(closed.id, { end_time: null }))),
        race(Effect.flatMap(operations, (o) => o.transition(e, "complete"))),
        race(Effect.flatMap(entries, (t) => t.remove(gone.id))),
        race(Effect.flatMap(operations, (o) => Effect.andThen(Effect.sleep(`${k % 4} millis`), o.transition(f, "pause")))),
        race(Effect.flatMap(entries, (t) => t.update(fixed.id, { start_time: new Date(Date.now() - 7_200_000).toISOString() }))),
        race(Effect.flatMap(operations, (o) => Effect.andThen(Effect.sleep(`${k % 4} millis`), o.transition(g, "complete"))))
      ])
      expect(defects(exits)).toEqual([])
      const stopped = await stopExits
      expect(defects(stopped)).toEqual([])
      expect(stopped.every((e) => e._tag === "Success")).toBe(true)
      // every move wins (it finds its operation in_progress); only an open entry by hand may be refused
      for (const i of [1, 3, 5, 7, 9, 10, 11, 12, 13]) expect(exits[i]!._tag).toBe("Success")
      refused += [4, 6, 8].filter((i) => exits[i]!._tag === "Failure").length
      ids.push(a, b, c, d, e, f, g, ...stops.map((x) => x.op))
    }
    const rows = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ id: string; status: string; running: number; actual_time: number; ended: number | null }>`
        SELECT o.id, o.status, o.actual_time,
          (SELECT count(*)::int FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id AND e.end_time IS NULL) AS running,
          (SELECT sum(e.duration_minutes) FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id AND e.end_time IS NOT NULL) AS ended
        FROM operations o WHERE o.tenant_id = ${tenant.id} AND o.id IN ${sql.in(ids)}`
    }))
    expect(rows).toHaveLength(ids.length)
    expect(rows.filter((r) => r.status === "in_progress")).toEqual([])
    expect(rows.filter((r) => r.running > 0)).toEqual([])
    for (const r of rows) expect(r.actual_time).toBeCloseTo(Number(r.ended ?? 0), 9)
    // the race happened: some open entries by hand came after the move and were refused
    expect(refused).toBeGreaterThan(0)
  })

  it("a batch stop that waited for an operation's lock shares only the entries still open after it, and sums the one ended meanwhile", async () => {
    // a deterministic form of the races above: the ender holds one operation's row lock and ends the batch's entry
    // on it; the stop starts meanwhile, waits for that lock (the statement's snapshot is older), and must see what
    // the ender committed (migration 0032)
    const { tenant, as, olga, cell, operation } = await scene("Stop race")
    const [x, y] = [await operation(), await operation()]
    const batches = Effect.service(Batches)
    const batch = await as(Effect.flatMap(batches, (s) => s.create({ batch_number: "SR-1", cell_id: cell, operation_ids: [x, y] })))
    await as(Effect.flatMap(batches, (s) => s.transition(batch.id, "start", { operator_id: olga })))
    await run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql`UPDATE time_entries SET start_time = start_time - interval '20 minutes' WHERE tenant_id = ${tenant.id} AND batch_id = ${batch.id}`))
    const ender = held(
      run,
      Effect.flatMap(Effect.service(SqlClient), (sql) => sql`UPDATE operations SET updated_at = now() WHERE tenant_id = ${tenant.id} AND id = ${x}`),
      Effect.flatMap(Effect.service(SqlClient), (sql) =>
        sql`UPDATE time_entries SET end_time = start_time + interval '5 minutes', duration_minutes = 5
          WHERE tenant_id = ${tenant.id} AND operation_id = ${x} AND end_time IS NULL`)
    )
    await ender.written
    const stopping = as(Effect.flatMap(batches, (s) => s.transition(batch.id, "stop", {})))
    const waited = await someoneWaits(run)
    ender.commit()
    await ender.done
    const stopped = await stopping
    expect(waited).toBe(true)
    // y's entry alone was open: all of the tracked time is its share
    expect(stopped.time_distribution!.map((s) => [s.operation_id, s.basis, s.share_seconds === s.tracked_seconds])).toEqual([[y, "equal", true]])
    expect(stopped.time_distribution![0]!.tracked_seconds).toBeGreaterThanOrEqual(1200)
    const rows = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ id: string; status: string; actual_time: number; minutes: Array<number> }>`
        SELECT o.id, o.status, o.actual_time, ARRAY(SELECT e.duration_minutes FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id) AS minutes
        FROM operations o WHERE o.tenant_id = ${tenant.id} AND o.id IN (${x}, ${y}) ORDER BY o.id = ${y}`
    }))
    expect(rows.map((r) => [r.id, r.status, r.minutes])).toEqual([[x, "completed", [5]], [y, "completed", [stopped.time_distribution![0]!.share_minutes]]])
    expect(rows[0]!.actual_time).toBe(5)
    expect(rows[1]!.actual_time).toBe(stopped.time_distribution![0]!.share_minutes)
  })

  it("a batch start that waited for the batch's lock starts the operation appended meanwhile, with its operator's entry", async () => {
    // add-operations holds the batch's row lock and appends while the start waits for it (the statement's snapshot
    // is older); the start must move every operation the batch has once it holds the lock (migration 0033)
    const { tenant, as, olga, cell, operation } = await scene("Start race")
    const [x, y] = [await operation(), await operation()]
    const batches = Effect.service(Batches)
    const batch = await as(Effect.flatMap(batches, (s) => s.create({ batch_number: "AR-1", cell_id: cell, operation_ids: [x] })))
    const adder = held(
      run,
      Effect.flatMap(Effect.service(SqlClient), (sql) => sql`UPDATE batches SET updated_at = now() WHERE tenant_id = ${tenant.id} AND id = ${batch.id}`),
      Effect.flatMap(Effect.service(SqlClient), (sql) => sql`SELECT mes_append_batch_operations(${tenant.id}, ${batch.id}, ARRAY[${y}]::uuid[])`)
    )
    await adder.written
    const starting = as(Effect.flatMap(batches, (s) => s.transition(batch.id, "start", { operator_id: olga })))
    const waited = await someoneWaits(run)
    adder.commit()
    await adder.done
    const started = await starting
    expect(waited).toBe(true)
    expect([started.new_status, [...started.operations_moved].sort(), started.time_entries_opened]).toEqual(["in_progress", [x, y].sort(), 2])
    // the batch's record, in the answer and in batch.started, lists both (migration 0034)
    const record = started.batch instanceof JsonText ? started.batch.parse() : started.batch
    expect(record.operation_ids).toEqual([x, y])
    const rows = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ id: string; status: string; running: Array<string> }>`
        SELECT o.id, o.status, ARRAY(SELECT e.user_id FROM time_entries e WHERE e.tenant_id = o.tenant_id AND e.operation_id = o.id AND e.end_time IS NULL) AS running
        FROM operations o WHERE o.tenant_id = ${tenant.id} AND o.id IN (${x}, ${y}) ORDER BY o.id = ${y}`
    }))
    expect(rows.map((r) => [r.id, r.status, r.running])).toEqual([[x, "in_progress", [olga]], [y, "in_progress", [olga]]])
    // and the events say so: an operation.started for each, after the batch's
    const events = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ event_type: string; id: string }>`
        SELECT event_type, data::json->>'operation_id' AS id FROM event_log WHERE tenant_id = ${tenant.id} AND event_type = 'operation.started'`
    }))
    expect(events.map((e) => e.id).sort()).toEqual([x, y].sort())
    const [batchStarted] = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ ids: Array<string> }>`
        SELECT ARRAY(SELECT json_array_elements_text(data::json->'batch'->'operation_ids')) AS ids
        FROM event_log WHERE tenant_id = ${tenant.id} AND event_type = 'batch.started'`
    }))
    expect(batchStarted!.ids).toEqual([x, y])
  })

  it("a pause that waited for a lock taken only to add an entry counts that entry in actual_time", async () => {
    // as batch start does for an operation already in progress: it locks the row without changing it and opens an
    // entry; PostgreSQL then lets the waiting pause go on with what it computed before the wait
    const { tenant, as, olga, operation } = await scene("Lock-only race")
    const op = await operation(["start"])
    const opener = held(
      run,
      Effect.flatMap(Effect.service(SqlClient), (sql) => sql`SELECT 1 FROM operations WHERE tenant_id = ${tenant.id} AND id = ${op} FOR UPDATE`),
      Effect.flatMap(Effect.service(SqlClient), (sql) =>
        sql`INSERT INTO time_entries (tenant_id, id, operation_id, user_id, start_time) VALUES (${tenant.id}, gen_random_uuid(), ${op}, ${olga}, now())`)
    )
    await opener.written
    const pausing = as(Effect.flatMap(Effect.service(Operations), (o) => o.transition(op, "pause")))
    const waited = await someoneWaits(run)
    opener.commit()
    await opener.done
    await pausing
    expect(waited).toBe(true)
    const [row] = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ actual_time: number; ended: number; running: number }>`
        SELECT o.actual_time, (SELECT sum(e.duration_minutes) FROM time_entries e WHERE e.operation_id = o.id) AS ended,
          (SELECT count(*)::int FROM time_entries e WHERE e.operation_id = o.id AND e.end_time IS NULL) AS running
        FROM operations o WHERE o.tenant_id = ${tenant.id} AND o.id = ${op}`
    }))
    expect(row!.running).toBe(0)
    expect(Number(row!.ended)).toBeGreaterThan(0)
    expect(row!.actual_time).toBeCloseTo(Number(row!.ended), 9)
  })
})
