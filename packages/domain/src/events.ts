// Events of spec 6.1 and the outbox port: use cases append events in the same transaction as the
// change (a rolled-back change emits nothing); a dispatcher delivers them later. Payloads are
// documented in docs/events.md.
import { Context, Effect } from "effect"
import { CurrentTenant, newId } from "./ports.ts"

export const EVENT_TYPES = [
  "job.created",
  "job.updated",
  "job.started",
  "job.stopped",
  "job.resumed",
  "job.completed",
  "part.created",
  "part.updated",
  "part.started",
  "part.completed",
  "operation.started",
  "operation.paused",
  "operation.resumed",
  "operation.completed",
  "batch.started",
  "batch.completed",
  "issue.created",
  "ncr.created",
  "ncr.verified",
  "step.added",
  "step.completed"
] as const
export type EventType = typeof EVENT_TYPES[number]

export const isEventType = (s: string): s is EventType => (EVENT_TYPES as ReadonlyArray<string>).includes(s)

export interface DomainEvent {
  readonly id: string
  readonly type: EventType
  readonly data: Readonly<Record<string, unknown>>
}

export class Outbox extends Context.Service<Outbox, {
  /** Appends events of the tenant; joins the caller's transaction. */
  readonly append: (tenantId: string, events: ReadonlyArray<DomainEvent>) => Effect.Effect<void>
}>()("mes/domain/Outbox") {}

export interface NewEvent {
  readonly type: EventType
  readonly data: Readonly<Record<string, unknown>>
}

/** An emitter over a captured outbox: appends events for the caller's tenant, inside the change's transaction. */
export const emitter = (outbox: Outbox["Service"]) => (events: ReadonlyArray<NewEvent>) =>
  Effect.gen(function*() {
    if (events.length === 0) return
    const tenant = yield* CurrentTenant
    yield* outbox.append(tenant.id, events.map((e) => ({ id: newId(), ...e })))
  })

interface Moved {
  readonly previous_status: string
  readonly new_status: string
}
const statusChange = (move?: Moved) => (move === undefined ? {} : { previous_status: move.previous_status, new_status: move.new_status })

// Payloads (docs/events.md): the ids and numbers a receiver routes by, the status change where there
// is one, and the record as the API returns it.

type JobLike = { readonly id: string; readonly job_number: string; readonly customer: string | null; readonly status: string }
type TimedJob = JobLike & { readonly started_at: unknown; readonly completed_at: unknown; readonly actual_duration: number | null }

export const jobEvent = (type: EventType, job: JobLike, move?: Moved): NewEvent => ({
  type,
  data: { job_id: job.id, job_number: job.job_number, customer: job.customer, status: job.status, ...statusChange(move), job }
})

/** job.completed, exactly as spec 6.2. */
export const jobCompletedEvent = (job: TimedJob, move: Moved): NewEvent => ({
  type: "job.completed",
  data: {
    job_id: job.id,
    job_number: job.job_number,
    customer: job.customer,
    previous_status: move.previous_status,
    new_status: move.new_status,
    started_at: job.started_at,
    completed_at: job.completed_at,
    actual_duration: job.actual_duration
  }
})

type PartLike = { readonly id: string; readonly part_number: string; readonly job_id: string; readonly status: string }
export const partEvent = (type: EventType, part: PartLike, move?: Moved): NewEvent => ({
  type,
  data: { part_id: part.id, part_number: part.part_number, job_id: part.job_id, status: part.status, ...statusChange(move), part }
})

type OperationLike = { readonly id: string; readonly operation_name: string; readonly part_id: string; readonly status: string }
export const operationEvent = (type: EventType, operation: OperationLike, move?: Moved, extra: Record<string, unknown> = {}): NewEvent => ({
  type,
  data: {
    operation_id: operation.id,
    operation_name: operation.operation_name,
    part_id: operation.part_id,
    status: operation.status,
    ...statusChange(move),
    ...extra,
    operation
  }
})

type BatchLike = { readonly id: string; readonly batch_number: string; readonly status: string }
export const batchEvent = (type: EventType, batch: BatchLike, move: Moved, extra: Record<string, unknown> = {}): NewEvent => ({
  type,
  data: { batch_id: batch.id, batch_number: batch.batch_number, status: batch.status, ...statusChange(move), ...extra, batch }
})

type IssueLike = {
  readonly id: string
  readonly issue_type: string
  readonly ncr_number: string | null
  readonly operation_id: string
  readonly severity: string | null
  readonly status: string
}
export const issueEvent = (type: EventType, issue: IssueLike): NewEvent => ({
  type,
  data: {
    issue_id: issue.id,
    issue_type: issue.issue_type,
    ncr_number: issue.ncr_number,
    operation_id: issue.operation_id,
    severity: issue.severity,
    status: issue.status,
    issue
  }
})

type SubstepLike = { readonly id: string; readonly operation_id: string; readonly sequence: number; readonly completed: boolean }
export const stepEvent = (type: EventType, substep: SubstepLike): NewEvent => ({
  type,
  data: { substep_id: substep.id, operation_id: substep.operation_id, sequence: substep.sequence, completed: substep.completed, substep }
})

/** part.started / part.completed for the parts whose status a roll-up changed (spec 6.1). */
export const rollUpEvents = (parts: ReadonlyArray<PartLike & { readonly previous: string }>): Array<NewEvent> =>
  parts.flatMap((p) => {
    const move = { previous_status: p.previous, new_status: p.status }
    const { previous: _p, ...part } = p
    return p.status === "completed"
      ? [partEvent("part.completed", part, move)]
      : p.status === "in_progress" && p.previous === "not_started"
      ? [partEvent("part.started", part, move)]
      : []
  })
