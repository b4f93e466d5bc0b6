// A job's delete and an append of one of its operations to a batch, at the same moment (migration 0039). A job is not
// deleted while one of its operations is in a draft, ready or in-progress batch (409), but each statement checked with
// the snapshot it began with: an append still running when the delete committed put the hidden operation in the batch,
// and a delete still running when the append committed did not see it. Here each side is held open at the point where
// the race lands, and the other request must wait for it and then be refused.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Batches, Conflict, Issues, Jobs, NotFound, Operations, Parts, Substeps, Sync, Templates, Tenants, TimeEntries, ValidationFailed } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, held, someoneWaits, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default)
const run = useDomainApp()

/** The request's outcome: written, a 409's message, a 422's "field constraint" details, or what else it was. */
const outcome = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return "written"
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "Some" && error.value instanceof Conflict) return `409 ${error.value.message}`
  if (error._tag === "Some" && error.value instanceof NotFound) return "404"
  if (error._tag === "Some" && error.value instanceof ValidationFailed) return `422 ${error.value.details.map((d) => `${d.field} ${d.constraint}`).join(", ")}`
  return Cause.pretty(exit.cause)
}

/** `statement` run in a transaction of its own that stays open until `commit()`. */
const holding = (statement: string, params: ReadonlyArray<string>) =>
  held(run, Effect.flatMap(Effect.service(SqlClient), (sql) => sql.unsafe(statement, params)))

const query = <A extends object>(statement: string, params: ReadonlyArray<string>) =>
  run(Effect.flatMap(Effect.service(SqlClient), (sql) => sql.unsafe<A>(statement, params)))

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("a job's delete and a batch append under concurrency", () => {
  const scene = async (name: string) => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name })))
    const race = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, Effect.exit(effect)))
    const [cell] = await query<{ id: string }>("INSERT INTO cells (tenant_id, id, name) VALUES ($1, gen_random_uuid(), 'Saw') RETURNING id", [tenant.id])
    let n = 0
    /** A job with one operation, and an empty draft batch (a batch with another job's operation when `full`). */
    const pair = async () => {
      const k = ++n
      const create = (number: string) =>
        run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
          jobs.create({ job_number: number, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "saw", sequence: 1 }] }] }))))
      const job = await create(`J-${k}`)
      const other = await create(`O-${k}`)
      const batch = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Batches), (b) =>
        b.create({ batch_number: `B-${k}`, cell_id: cell!.id, operation_ids: [other.parts[0]!.operations[0]!.operation_id] }))))
      return { job: job.job_id, operation: job.parts[0]!.operations[0]!.operation_id, batch: batch.id }
    }
    return { race, pair, cell: cell!.id }
  }
  const inBatch = (operation: string) =>
    query<{ n: number }>("SELECT count(*)::int AS n FROM batch_operations WHERE operation_id = $1", [operation]).then((r) => r[0]!.n)
  const deleted = (job: string) =>
    query<{ gone: boolean }>("SELECT deleted_at IS NOT NULL AS gone FROM jobs WHERE id = $1", [job]).then((r) => r[0]!.gone)

  it("an add-operations and a batch create that run while the job's delete commits are refused (409), and nothing is appended", async () => {
    const { race, pair, cell } = await scene("Delete first")
    for (const via of ["add-operations", "create"] as const) {
      const { job, operation, batch } = await pair()
      // the delete's write, not yet committed
      const deleting = holding("UPDATE jobs SET deleted_at = now(), updated_at = now() WHERE id = $1", [job])
      await deleting.written
      const request = race(Effect.flatMap(Effect.service(Batches), (b) =>
        via === "create" ? b.create({ batch_number: `N-${operation}`, cell_id: cell, operation_ids: [operation] }) : b.addOperations(batch, { operation_ids: [operation] })))
      const waited = await someoneWaits(run)
      deleting.commit()
      await deleting.done
      expect([via, outcome(await request)]).toEqual([via, "409 the job of an operation being added was deleted meanwhile; nothing was written, retry it"])
      expect(waited).toBe(true)
      expect(await inBatch(operation)).toBe(0)
      // asked again, the operation is gone: 422 at the operation
      const again = await race(Effect.flatMap(Effect.service(Batches), (b) => b.addOperations(batch, { operation_ids: [operation] })))
      expect(outcome(again)).toMatch(/^422 operation_ids/)
    }
  })

  it("a job's delete that runs while an append of its operation commits is refused (409, naming the batch), and the job stays", async () => {
    const { race, pair } = await scene("Append first")
    const { job, operation, batch } = await pair()
    // the append, not yet committed (as add-operations does it after the batch's lock)
    const appending = holding(
      "SELECT mes_append_batch_operations(tenant_id, id, mes_operations_of_live_jobs(tenant_id, ARRAY[$2]::uuid[])) FROM batches WHERE id = $1",
      [batch, operation]
    )
    await appending.written
    const request = race(Effect.flatMap(Effect.service(Jobs), (j) => j.remove(job)))
    const waited = await someoneWaits(run)
    appending.commit()
    await appending.done
    expect(outcome(await request)).toMatch(/^409 .*B-1/)
    expect(waited).toBe(true)
    expect(await deleted(job)).toBe(false)
    expect(await inBatch(operation)).toBe(1)
  })
})

// A write under a job (its operation's start or PATCH, a time entry by hand, an issue, a substep, a part or an operation
// created under it, a template applied, a part or operation synced) and the job's delete, at the same moment (0040). Each write checked that the job is live
// with the snapshot its statement began with: one still running when the delete committed wrote to the hidden records.
// Now it share-locks the job and reads it after the lock, where the delete locks it first.
describe.skipIf(testDatabaseKind() === "pglite")("a job's delete and the writes under it, under concurrency", () => {
  const scene = async (name: string) => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name })))
    const race = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, Effect.exit(effect)))
    await query("INSERT INTO cells (tenant_id, id, name) VALUES ($1, gen_random_uuid(), 'Saw')", [tenant.id])
    const template = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Templates), (t) =>
      t.create({ name: "Deburr", items: [{ description: "file the edge" }] }))))
    let n = 0
    /** A job with one part with one operation and its time entry, the job and the part with external keys (erp, X-<n> and XP-<n>). */
    const victim = async () => {
      const k = ++n
      const job = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
        jobs.create({ job_number: `J-${k}`, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "saw", sequence: 1 }] }] }))))
      const part = job.parts[0]!
      await query("UPDATE jobs SET external_source = 'erp', external_id = $2 WHERE id = $1", [job.job_id, `X-${k}`])
      await query("UPDATE parts SET external_source = 'erp', external_id = $2 WHERE id = $1", [part.part_id, `XP-${k}`])
      const operation = part.operations[0]!.operation_id
      const entry = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(TimeEntries), (t) =>
        t.create({ operation_id: operation, start_time: "2026-01-05T06:00:00Z", end_time: "2026-01-05T07:00:00Z" }))))
      return { k, job: job.job_id, part: part.part_id, operation, entry: entry.id, template: template.id }
    }
    /** What the tenant has written: its events, outbox rows, parts, operations (status, notes, actual_time), entries (their minutes), issues and substeps. */
    const written = () =>
      query<{ state: string }>(
        `SELECT concat_ws(' | ',
          (SELECT count(*) FROM event_log WHERE tenant_id = $1), (SELECT count(*) FROM outbox WHERE tenant_id = $1),
          (SELECT count(*) FROM parts WHERE tenant_id = $1),
          (SELECT string_agg(status || ':' || coalesce(notes, '-') || ':' || actual_time, ',' ORDER BY id) FROM operations WHERE tenant_id = $1),
          (SELECT count(*) || ':' || coalesce(sum(duration_minutes), 0) FROM time_entries WHERE tenant_id = $1),
          (SELECT count(*) FROM issues WHERE tenant_id = $1),
          (SELECT count(*) FROM substeps WHERE tenant_id = $1)) AS state`,
        [tenant.id]
      ).then((r) => r[0]!.state)
    return { race, victim, written, tenant: tenant.id }
  }
  const deleted = (job: string) =>
    query<{ gone: boolean }>("SELECT deleted_at IS NOT NULL AS gone FROM jobs WHERE id = $1", [job]).then((r) => r[0]!.gone)
  /** A request of the tenant in a transaction of its own that stays open until `commit()` (held). */
  const holdingRequest = (tenant: string, effect: Effect.Effect<unknown, unknown, any>) =>
    held(run, asTenant(tenant, effect) as Effect.Effect<unknown, unknown, SqlClient>)

  type Victim = {
    readonly k: number
    readonly job: string
    readonly part: string
    readonly operation: string
    readonly entry: string
    readonly template: string
  }
  /** Each write, and its answer once the job is deleted (what the same request gets after the delete). */
  const writes: ReadonlyArray<readonly [string, (v: Victim) => Effect.Effect<unknown, unknown, any>, RegExp]> = [
    ["start", (v) => Effect.flatMap(Effect.service(Operations), (o) => o.transition(v.operation, "start")), /^404$/],
    ["PATCH", (v) => Effect.flatMap(Effect.service(Operations), (o) => o.update(v.operation, { notes: "late" })), /^404$/],
    ["time entry", (v) =>
      Effect.flatMap(Effect.service(TimeEntries), (t) =>
        t.create({ operation_id: v.operation, start_time: "2026-01-05T08:00:00Z", end_time: "2026-01-05T09:00:00Z" })), /^422 operation_id /],
    ["entry correction", (v) => Effect.flatMap(Effect.service(TimeEntries), (t) => t.update(v.entry, { end_time: "2026-01-05T07:30:00Z" })), /^404$/],
    ["entry delete", (v) => Effect.flatMap(Effect.service(TimeEntries), (t) => t.remove(v.entry)), /^404$/],
    ["issue", (v) => Effect.flatMap(Effect.service(Issues), (i) => i.create({ operation_id: v.operation, title: "Burr", description: "on the edge" })), /^422 operation_id /],
    ["substep", (v) => Effect.flatMap(Effect.service(Substeps), (s) => s.create({ operation_id: v.operation, description: "deburr", sequence: 1 })), /^422 operation_id /],
    ["part", (v) => Effect.flatMap(Effect.service(Parts), (p) => p.create({ job_id: v.job, part_number: "Q", quantity: 1 })), /^422 job_id /],
    ["operation", (v) => Effect.flatMap(Effect.service(Operations), (o) => o.create({ part_id: v.part, operation_name: "mill" })), /^422 part_id /],
    ["template", (v) => Effect.flatMap(Effect.service(Templates), (t) => t.apply({ id: v.template, operation_id: v.operation })), /^404$/],
    ["part sync", (v) =>
      Effect.flatMap(Effect.service(Sync), (s) =>
        s.part({ external_source: "erp", external_id: `SP-${v.k}`, job_external_id: `X-${v.k}`, part_number: "S", quantity: 1 })), /^422 job_external_id /],
    ["operation sync", (v) =>
      Effect.flatMap(Effect.service(Sync), (s) =>
        s.operation({ external_source: "erp", external_id: `SO-${v.k}`, part_external_id: `XP-${v.k}`, cell_name: "Saw", operation_name: "mill" })), /^422 part_external_id /]
  ]

  it("a write under the job that runs while the job's delete commits waits for it, then writes nothing and answers as after the delete", async () => {
    const { race, victim, written } = await scene("Delete first, writes")
    // each write's answer, whether it waited, whether the tenant's records are as before, and its answer asked again
    const seen: Array<readonly [string, string, boolean, boolean, string]> = []
    for (const [name, write] of writes) {
      const v = await victim()
      const before = await written()
      // the delete's write, not yet committed
      const deleting = holding("UPDATE jobs SET deleted_at = now(), updated_at = now() WHERE id = $1", [v.job])
      await deleting.written
      const request = race(write(v))
      const waited = await someoneWaits(run)
      deleting.commit()
      await deleting.done
      const answered = outcome(await request)
      // the delete's own write changes none of what `written` counts (it marks the job)
      seen.push([name, answered, waited, (await written()) === before, outcome(await race(write(v)))])
    }
    expect(seen).toEqual(writes.map(([name, , answer]) => [name, expect.stringMatching(answer), true, true, expect.stringMatching(answer)]))
  })

  it("a job's sync that runs while the job's delete commits is refused (409, retry it) and writes nothing; one the delete waits for is kept", async () => {
    const { race, victim, written, tenant } = await scene("Job sync")
    const sync = (k: number, customer: string) =>
      Effect.flatMap(Effect.service(Sync), (s) => s.job({ external_source: "erp", external_id: `X-${k}`, job_number: `J-${k}`, customer }))
    const jobs = () => query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1", [tenant]).then((r) => r[0]!.n)
    // the delete first: the sync waits for it, then finds the job's key free and its id taken
    const first = await victim()
    const before = [await written(), await jobs()]
    const deleting = holding("UPDATE jobs SET deleted_at = now(), updated_at = now() WHERE id = $1", [first.job])
    await deleting.written
    const request = race(sync(first.k, "Acme"))
    const waited = await someoneWaits(run)
    deleting.commit()
    await deleting.done
    expect(outcome(await request)).toBe("409 a concurrent write changed records this request writes; nothing was written, retry it")
    expect(waited).toBe(true)
    expect([await written(), await jobs()]).toEqual(before)
    // retried, as after the delete: a job of its own under that key
    expect(outcome(await race(sync(first.k, "Acme")))).toBe("written")
    expect(await jobs()).toBe(before[1] as number + 1)
    // the sync first: the delete waits for it, then deletes the synced job
    const second = await victim()
    const syncing = holdingRequest(tenant, sync(second.k, "Acme"))
    await syncing.written
    const removing = race(Effect.flatMap(Effect.service(Jobs), (j) => j.remove(second.job)))
    const deleteWaited = await someoneWaits(run)
    syncing.commit()
    await syncing.done
    expect(outcome(await removing)).toBe("written")
    expect(deleteWaited).toBe(true)
    expect(await query<{ customer: string; gone: boolean }>("SELECT customer, deleted_at IS NOT NULL AS gone FROM jobs WHERE id = $1", [second.job]))
      .toEqual([{ customer: "Acme", gone: true }])
  })

  it("a job's delete that runs while a write under the job commits waits for it, then deletes the job", async () => {
    const { race, victim, written, tenant } = await scene("Writes first, delete")
    // the delete's answer, whether it waited, whether the job is deleted, and whether the write stays (hidden with the job)
    const seen: Array<readonly [string, string, boolean, boolean, boolean]> = []
    for (const [name, write] of writes) {
      const v = await victim()
      const before = await written()
      // the write, not yet committed
      const writing = holdingRequest(tenant, write(v))
      await writing.written
      const request = race(Effect.flatMap(Effect.service(Jobs), (j) => j.remove(v.job)))
      const waited = await someoneWaits(run)
      writing.commit()
      await writing.done
      seen.push([name, outcome(await request), waited, await deleted(v.job), (await written()) !== before])
    }
    expect(seen).toEqual(writes.map(([name]) => [name, "written", true, true, true]))
  })
})
