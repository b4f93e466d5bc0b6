// Time entries under concurrency (spec 2.8, 3.2, 3.3): a move that ends an operation's running entries and a
// move that opens one, at the same time on different connections. Whichever wins the operation's row lock,
// an operation that ends on_hold or completed has no running entry, and its actual_time is the sum of its
// ended entries (migration 0026; found by the lifecycle model test).
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Batches, Jobs, Operations, Tenants, TimeEntryStore } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default), as under load
const run = useDomainApp()

const ROUNDS = 15

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("time entries under concurrency", () => {
  it("an end and an open at once never leave a running entry on a paused or completed operation", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Entry race" })))
    const as = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, effect))
    /** A move of the race: refused (409) when the other one won, which is fine. */
    const race = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, Effect.exit(effect)))
    const operations = Effect.service(Operations)
    const [olga, cell] = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      const [p] = yield* sql<{ id: string }>`INSERT INTO profiles (tenant_id, id, display_name) VALUES (${tenant.id}, gen_random_uuid(), 'Olga') RETURNING id`
      const [c] = yield* sql<{ id: string }>`INSERT INTO cells (tenant_id, id, name) VALUES (${tenant.id}, gen_random_uuid(), 'Saw') RETURNING id`
      return [p!.id, c!.id]
    }))
    let n = 0
    /** A new operation (alone on its part), moved first by `before`. */
    const operation = async (...before: Array<"start" | "pause">) => {
      const job = await as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
        jobs.create({ job_number: `ER-${++n}`, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "a", sequence: 1 }] }] })))
      const id = job.parts[0]!.operations[0]!.operation_id
      for (const action of before) await as(Effect.flatMap(operations, (o) => o.transition(id, action)))
      return id
    }
    const ids: Array<string> = []
    for (let k = 0; k < ROUNDS; k++) {
      // start (opens) against PATCH completed, PATCH paused and, from on_hold, resume against PATCH completed
      const a = await operation()
      const b = await operation()
      const c = await operation("start", "pause")
      // a batch start (opens on every unfinished operation) against a complete of one of them
      const d = await operation("start")
      const batch = await as(Effect.flatMap(Effect.service(Batches), (s) => s.create({ batch_number: `EB-${k}`, cell_id: cell, operation_ids: [d] })))
      // a batch stop (completes its operations) against a resume of one of them that is on hold
      const e = await operation()
      const stopping = await as(Effect.flatMap(Effect.service(Batches), (s) => s.create({ batch_number: `ES-${k}`, cell_id: cell, operation_ids: [e] })))
      await as(Effect.flatMap(Effect.service(Batches), (s) => s.transition(stopping.id, "start", {})))
      await as(Effect.flatMap(operations, (o) => o.transition(e, "pause")))
      await Promise.all([
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
      ids.push(a, b, c, d, e)
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

  it("actual_time recomputed after a correction counts an entry another transaction ended while it waited for the lock", async () => {
    // a deterministic form of the race above: the ender holds the operation's row lock and ends the entry; the
    // correction's recompute starts meanwhile, waits for the lock, and must sum what the ender committed
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Recompute race" })))
    const as = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, effect))
    const olga = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      const [p] = yield* sql<{ id: string }>`INSERT INTO profiles (tenant_id, id, display_name) VALUES (${tenant.id}, gen_random_uuid(), 'Olga') RETURNING id`
      return p!.id
    }))
    const job = await as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: "RR-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "a", sequence: 1 }] }] })))
    const op = job.parts[0]!.operations[0]!.operation_id
    await as(Effect.flatMap(Effect.service(Operations), (o) => o.transition(op, "start", olga)))
    const ender = run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        // the lock as a pause takes it: by updating the operation's row
        yield* sql`UPDATE operations SET updated_at = now() WHERE tenant_id = ${tenant.id} AND id = ${op}`
        yield* Effect.sleep("400 millis")
        yield* sql`UPDATE time_entries SET end_time = start_time + interval '5 minutes', duration_minutes = 5
          WHERE tenant_id = ${tenant.id} AND operation_id = ${op} AND end_time IS NULL`
      }))
    }))
    await new Promise((resolve) => setTimeout(resolve, 150))
    const [recomputed] = await run(Effect.flatMap(Effect.service(TimeEntryStore), (s) => s.recomputeActualTime(tenant.id, [op])))
    await ender
    expect(recomputed!.actual_time).toBe(5)
  })

  it("a pause that waited for a lock taken only to add an entry counts that entry in actual_time", async () => {
    // as batch start does for an operation already in progress: it locks the row without changing it and opens an
    // entry; PostgreSQL then lets the waiting pause go on with what it computed before the wait
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Lock-only race" })))
    const as = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, effect))
    const olga = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      const [p] = yield* sql<{ id: string }>`INSERT INTO profiles (tenant_id, id, display_name) VALUES (${tenant.id}, gen_random_uuid(), 'Olga') RETURNING id`
      return p!.id
    }))
    const job = await as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: "LO-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "a", sequence: 1 }] }] })))
    const op = job.parts[0]!.operations[0]!.operation_id
    await as(Effect.flatMap(Effect.service(Operations), (o) => o.transition(op, "start")))
    const opener = run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 1 FROM operations WHERE tenant_id = ${tenant.id} AND id = ${op} FOR UPDATE`
        yield* Effect.sleep("400 millis")
        yield* sql`INSERT INTO time_entries (tenant_id, id, operation_id, user_id, start_time)
          VALUES (${tenant.id}, gen_random_uuid(), ${op}, ${olga}, now())`
      }))
    }))
    await new Promise((resolve) => setTimeout(resolve, 150))
    await as(Effect.flatMap(Effect.service(Operations), (o) => o.transition(op, "pause")))
    await opener
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
