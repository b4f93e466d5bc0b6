// Every event of spec 6.1 from its emitter, written to the outbox in the change's transaction
// (docs/events.md): a refused or rolled-back change writes none.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { EVENT_TYPES } from "@mes/domain"
import { client, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let tenantId: string
let operator: string
let cell: string
let n = 0

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId, api } = await h.as("Events"))
  operator = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
  cell = (await api.post("/api-cells", { name: "Saw" })).body.data.cell.id
  // a webhook subscribed to every event type, so that every event is queued (no dispatcher runs in this file)
  expect((await api.post("/api-webhooks", { url: "https://hooks.example.com/all", events: [...EVENT_TYPES] })).status).toBe(201)
})
afterAll(() => h.close())

let mark = 0
/** Events written since the last call, oldest first. */
const fresh = async () => {
  // the payload is kept once, in the event log; each event is queued for delivery by its outbox row, which refers
  // to it by (tenant_id, xid, id) (migration 0023; the tenant's webhook subscribes to every event)
  const rows = await h.sql(
    `SELECT l.seq AS id, l.event_type, l.data::json AS data, o.event_type AS queued_type
     FROM event_log l LEFT JOIN outbox o ON o.tenant_id = l.tenant_id AND o.xid = l.xid AND o.id = l.seq AND o.event_id = l.event_id
     WHERE l.tenant_id = $1 AND l.seq > $2 ORDER BY l.seq`,
    [tenantId, mark]
  )
  if (rows.length > 0) mark = Number(rows[rows.length - 1]!.id)
  for (const r of rows) expect(r.queued_type).toBe(r.event_type)
  return rows.map((r) => ({ type: r.event_type as string, data: r.data as Record<string, any> }))
}
const types = async () => (await fresh()).map((e) => e.type)
beforeEach(async () => {
  await fresh()
})

const newJob = async (parts = 1, ops = 1) => (await api.post("/api-jobs", nestedJob(`EV-${++n}`, parts, ops))).body.data

describe("queued for delivery only when subscribed", () => {
  it("an event is kept in the event log always, and queued in the outbox only while an active webhook of its tenant subscribes to it", async () => {
    const other = await h.as("Events, subscribed to job.created")
    const webhook = (await other.api.post("/api-webhooks", { url: "https://hooks.example.com/jobs", events: ["job.created"] })).body.data.webhook
    const written = async () =>
      (await h.sql(
        `SELECT l.event_type, o.id IS NOT NULL AS queued
         FROM event_log l LEFT JOIN outbox o ON o.tenant_id = l.tenant_id AND o.xid = l.xid AND o.id = l.seq
         WHERE l.tenant_id = $1 ORDER BY l.seq`,
        [other.tenantId]
      )).map((r) => `${r.event_type as string}${r.queued === true ? " queued" : ""}`)
    expect((await other.api.post("/api-jobs", nestedJob("SUB-1", 2, 1))).status).toBe(201)
    expect(await written()).toEqual(["job.created queued", "part.created", "part.created"])
    expect((await other.api.patch(`/api-webhooks?id=${webhook.id}`, { active: false })).status).toBe(200)
    expect((await other.api.post("/api-jobs", nestedJob("SUB-2", 1, 1))).status).toBe(201)
    expect((await written()).slice(3)).toEqual(["job.created", "part.created"])
    // nothing of it reached this file's tenant
    expect(await fresh()).toEqual([])
  })
})

describe("job events", () => {
  it("POST /api-jobs emits job.created with the record, and part.created per part", async () => {
    const job = await newJob(2)
    const events = await fresh()
    expect(events.map((e) => e.type)).toEqual(["job.created", "part.created", "part.created"])
    expect(events[0]!.data).toMatchObject({ job_id: job.job_id, job_number: job.job_number, customer: "Acme Steel", status: "not_started" })
    expect(events[0]!.data.job.parts).toHaveLength(2)
    expect(events[1]!.data).toMatchObject({ part_id: job.parts[0].part_id, part_number: "P-1", job_id: job.job_id, status: "not_started" })
  })

  it("lifecycle moves emit job.started / stopped / resumed / completed; job.completed is exactly spec 6.2", async () => {
    const { job_id } = await newJob()
    await fresh()
    for (const a of ["start", "stop", "resume", "complete"]) await api.post(`/api-job-lifecycle/${a}?id=${job_id}`)
    const events = await fresh()
    expect(events.map((e) => e.type)).toEqual(["job.started", "job.stopped", "job.resumed", "job.completed"])
    expect(events[0]!.data).toMatchObject({ job_id, previous_status: "not_started", new_status: "in_progress" })
    expect(Object.keys(events[3]!.data).sort()).toEqual(
      ["actual_duration", "completed_at", "customer", "job_id", "job_number", "new_status", "previous_status", "started_at"]
    )
    expect(events[3]!.data).toMatchObject({ job_id, previous_status: "in_progress", new_status: "completed" })
    expect(typeof events[3]!.data.actual_duration).toBe("number")
  })

  it("PATCH emits job.updated, and the lifecycle event when status moves", async () => {
    const { job_id } = await newJob()
    await fresh()
    await api.patch(`/api-jobs?id=${job_id}`, { notes: "rush" })
    expect(await types()).toEqual(["job.updated"])
    await api.patch(`/api-jobs?id=${job_id}`, { status: "in_progress" })
    expect(await types()).toEqual(["job.updated", "job.started"])
  })

  it("a refused or invalid change emits nothing", async () => {
    const { job_id, job_number } = await newJob()
    await fresh()
    expect((await api.post(`/api-job-lifecycle/complete?id=${job_id}`)).status).toBe(409)
    expect((await api.post("/api-jobs", nestedJob(job_number))).status).toBe(409)
    expect((await api.patch(`/api-jobs?id=${job_id}`, { priority: -1 })).status).toBe(422)
    expect((await api.post("/api-operation-lifecycle/start?id=" + (await newOpId()) + "&user_id=00000000-0000-4000-8000-000000000000")).status).toBe(422)
    expect((await types()).filter((t) => t !== "job.created" && t !== "part.created")).toEqual([])
  })
})

const newOpId = async () => (await newJob()).parts[0].operations[0].operation_id as string

describe("part and operation events", () => {
  it("part create and PATCH emit part.created / part.updated", async () => {
    const { job_id } = await newJob()
    await fresh()
    const part = (await api.post("/api-parts", { job_id, part_number: "X", quantity: 1 })).body.data.part
    await api.patch(`/api-parts?id=${part.id}`, { quantity: 3 })
    const events = await fresh()
    expect(events.map((e) => e.type)).toEqual(["part.created", "part.updated"])
    expect(events[1]!.data.part.quantity).toBe(3)
  })

  it("operation moves emit operation.* and the roll-up emits part.started / part.completed", async () => {
    const job = await newJob(1, 1)
    const op = job.parts[0].operations[0].operation_id
    await fresh()
    await api.post(`/api-operation-lifecycle/start?id=${op}&user_id=${operator}`)
    await api.post(`/api-operation-lifecycle/pause?id=${op}`)
    await api.post(`/api-operation-lifecycle/resume?id=${op}&user_id=${operator}`)
    await api.post(`/api-operation-lifecycle/complete?id=${op}`)
    const events = await fresh()
    expect(events.map((e) => e.type)).toEqual([
      "operation.started", "part.started", "operation.paused", "operation.resumed", "operation.completed", "part.completed"
    ])
    expect(events[0]!.data).toMatchObject({ operation_id: op, previous_status: "not_started", new_status: "in_progress" })
    expect(events[2]!.data).toMatchObject({ previous_status: "in_progress", new_status: "on_hold", time_entry_ended: true })
    expect(events[1]!.data).toMatchObject({ part_id: job.parts[0].part_id, previous_status: "not_started", new_status: "in_progress" })
    expect(events[5]!.data).toMatchObject({ new_status: "completed" })
  })
})

describe("batch, quality and step events", () => {
  it("batch start/stop emit batch.started / batch.completed and the operations' events", async () => {
    const job = await newJob(1, 2)
    const ops = job.parts[0].operations.map((o: any) => o.operation_id)
    const batch = (await api.post("/api-batches", { batch_number: `EVB-${++n}`, cell_id: cell, operation_ids: ops })).body.data.batch
    await fresh()
    await api.post(`/api-batch-lifecycle/start?id=${batch.id}`, { operator_id: operator })
    const started = await fresh()
    expect(started.map((e) => e.type)).toEqual(["batch.started", "operation.started", "operation.started", "part.started"])
    expect(started[0]!.data).toMatchObject({ batch_id: batch.id, batch_number: batch.batch_number, previous_status: "draft", new_status: "in_progress", operator_id: operator })
    await api.post(`/api-batch-lifecycle/stop?id=${batch.id}`)
    const stopped = await fresh()
    expect(stopped.map((e) => e.type)).toEqual(["batch.completed", "operation.completed", "operation.completed", "part.completed"])
    expect(stopped[0]!.data.time_distribution).toHaveLength(2)
  })

  it("issues emit issue.created, NCRs ncr.created and ncr.verified when a verifier is set", async () => {
    const op = await newOpId()
    await fresh()
    await api.post("/api-issues", { operation_id: op, title: "Scratch", description: "d" })
    const ncr = (await api.post("/api-issues", { operation_id: op, title: "Bad weld", description: "d", issue_type: "ncr", severity: "high" })).body.data.issue
    await api.patch(`/api-issues?id=${ncr.id}`, { status: "in_progress" })
    await api.patch(`/api-issues?id=${ncr.id}`, { verified_by_id: operator })
    const events = await fresh()
    expect(events.map((e) => e.type)).toEqual(["issue.created", "ncr.created", "ncr.verified"])
    expect(events[1]!.data).toMatchObject({ issue_id: ncr.id, issue_type: "ncr", ncr_number: ncr.ncr_number, severity: "high" })
  })

  it("substeps emit step.added and step.completed once", async () => {
    const op = await newOpId()
    await fresh()
    const step = (await api.post("/api-substeps", { operation_id: op, description: "Check", sequence: 1 })).body.data.substep
    await Promise.all([1, 2, 3].map(() => api.patch(`/api-substeps?id=${step.id}`, { completed: true })))
    await api.patch(`/api-substeps?id=${step.id}`, { description: "Check twice" })
    const events = await fresh()
    expect(events.map((e) => e.type)).toEqual(["step.added", "step.completed"])
    expect(events[1]!.data).toMatchObject({ substep_id: step.id, operation_id: op, completed: true })
  })

  it("ERP sync emits job.created then job.updated with the parts' events, and nothing for what did not change", async () => {
    const body = { external_id: `S-${++n}`, external_source: "erp", job_number: `SYNC-${n}`, parts: [{ external_id: `SP-${n}`, part_number: "A", quantity: 1 }] }
    await api.put("/api-jobs/sync", body)
    // the job changes, its part does not
    await api.put("/api-jobs/sync", { ...body, customer: "Initech" })
    // only the part changes
    await api.put("/api-jobs/sync", { ...body, customer: "Initech", parts: [{ ...body.parts[0], quantity: 2 }] })
    // nothing changes
    expect((await api.put("/api-jobs/sync", { ...body, customer: "Initech", parts: [{ ...body.parts[0], quantity: 2 }] })).body.data.action).toBe("unchanged")
    expect(await types()).toEqual(["job.created", "part.created", "job.updated", "part.updated"])
  })
})
