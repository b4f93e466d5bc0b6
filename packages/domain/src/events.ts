// Events of spec 6.1 and the outbox port: use cases append events in the same transaction as the
// change (a rolled-back change emits nothing); a dispatcher delivers them later. Payloads are
// documented in docs/events.md.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
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
  "step.completed",
  "quantity.recorded",
  "assignment.created",
  "assignment.updated",
  "assignment.removed",
  "downtime.started",
  "downtime.ended"
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

/**
 * How an event's `data` is built from the record it is about (docs/events.md), in key order:
 * `picks` (payload key ← record field), then previous_status/new_status when the event is a move,
 * then `after` picks, then extras of the emitter, then the whole record under `record`.
 * The outbox keeps this order; JS emitters (`eventData`) and the SQL store compile the same shape.
 */
export interface PayloadShape {
  readonly picks: ReadonlyArray<readonly [key: string, field: string]>
  readonly after?: ReadonlyArray<readonly [key: string, field: string]>
  readonly record?: string
}

export const payloadShapes = {
  job: { picks: [["job_id", "id"], ["job_number", "job_number"], ["customer", "customer"], ["status", "status"]], record: "job" },
  /** spec 6.2, exactly */
  jobCompleted: {
    picks: [["job_id", "id"], ["job_number", "job_number"], ["customer", "customer"]],
    after: [["started_at", "started_at"], ["completed_at", "completed_at"], ["actual_duration", "actual_duration"]]
  },
  part: { picks: [["part_id", "id"], ["part_number", "part_number"], ["job_id", "job_id"], ["status", "status"]], record: "part" },
  operation: {
    picks: [["operation_id", "id"], ["operation_name", "operation_name"], ["part_id", "part_id"], ["status", "status"]],
    record: "operation"
  },
  batch: { picks: [["batch_id", "id"], ["batch_number", "batch_number"], ["status", "status"]], record: "batch" },
  issue: {
    picks: [["issue_id", "id"], ["issue_type", "issue_type"], ["ncr_number", "ncr_number"], ["operation_id", "operation_id"], ["severity", "severity"], ["status", "status"]],
    record: "issue"
  },
  step: { picks: [["substep_id", "id"], ["operation_id", "operation_id"], ["sequence", "sequence"], ["completed", "completed"]], record: "substep" },
  quantity: {
    picks: [["quantity_id", "id"], ["operation_id", "operation_id"], ["part_id", "part_id"], ["job_id", "job_id"], ["good", "good"], ["scrap", "scrap"],
      ["rework", "rework"], ["scrap_reason_id", "scrap_reason_id"]],
    record: "quantity"
  },
  assignment: {
    picks: [["assignment_id", "id"], ["user_id", "user_id"], ["target_type", "target_type"], ["operation_id", "operation_id"], ["part_id", "part_id"],
      ["job_id", "job_id"], ["cell_id", "cell_id"], ["active", "active"]],
    record: "assignment"
  },
  downtime: {
    picks: [["downtime_id", "id"], ["cell_id", "cell_id"], ["reason", "reason"], ["planned", "planned"], ["start_time", "start_time"], ["end_time", "end_time"]],
    record: "downtime"
  }
} as const satisfies Record<string, PayloadShape>

/** An event about a record, built by the store from the record it writes (one statement). */
export interface EventPlan {
  readonly type: EventType
  readonly shape: PayloadShape
}

/** The payload shape of each event type that is about one record. */
export const shapeOf = (type: EventType): PayloadShape =>
  type === "job.completed"
    ? payloadShapes.jobCompleted
    : type.startsWith("job.")
    ? payloadShapes.job
    : type.startsWith("part.")
    ? payloadShapes.part
    : type.startsWith("operation.")
    ? payloadShapes.operation
    : type.startsWith("batch.")
    ? payloadShapes.batch
    : type.startsWith("step.")
    ? payloadShapes.step
    : type.startsWith("quantity.")
    ? payloadShapes.quantity
    : type.startsWith("assignment.")
    ? payloadShapes.assignment
    : type.startsWith("downtime.")
    ? payloadShapes.downtime
    : payloadShapes.issue

/** The plan of an event of `type` about the record a statement writes. */
export const eventPlan = (type: EventType): EventPlan => ({ type, shape: shapeOf(type) })

/** `data` of an event from a record in hand (JS emitters). */
export const eventData = (
  shape: PayloadShape,
  record: Readonly<Record<string, unknown>>,
  move?: Moved,
  extra: Readonly<Record<string, unknown>> = {}
): Record<string, unknown> => {
  const data: Record<string, unknown> = {}
  for (const [key, field] of shape.picks) data[key] = record[field]
  if (move !== undefined) Object.assign(data, { previous_status: move.previous_status, new_status: move.new_status })
  for (const [key, field] of shape.after ?? []) data[key] = record[field]
  Object.assign(data, extra)
  if (shape.record !== undefined) data[shape.record] = record
  return data
}

type AnyRecord = { readonly id: string; readonly [field: string]: unknown }

export const partEvent = (type: EventType, part: AnyRecord, move?: Moved): NewEvent => ({ type, data: eventData(payloadShapes.part, part, move) })

export const operationEvent = (type: EventType, operation: AnyRecord, move?: Moved, extra: Record<string, unknown> = {}): NewEvent => ({
  type,
  data: eventData(payloadShapes.operation, operation, move, extra)
})

export const batchEvent = (type: EventType, batch: AnyRecord, move: Moved, extra: Record<string, unknown> = {}): NewEvent => ({
  type,
  data: eventData(payloadShapes.batch, batch, move, extra)
})

export const stepEvent = (type: EventType, substep: AnyRecord): NewEvent => ({ type, data: eventData(payloadShapes.step, substep) })

/** An event about a record in hand, with the payload shape of its type. */
export const recordEvent = (type: EventType, record: AnyRecord): NewEvent => ({ type, data: eventData(shapeOf(type), record) })

type PartLike = { readonly id: string; readonly status: string }

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
