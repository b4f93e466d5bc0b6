// Events of spec 6.1: their types and payload shapes. Use cases plan them (EventPlan); the store's statement
// that makes the change builds each payload from the rows it wrote and appends it to the outbox, so a rolled-back
// change emits nothing; a dispatcher delivers them later. Payloads are documented in docs/events.md.

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

/**
 * How an event's `data` is built from the record it is about (docs/events.md), in key order:
 * `picks` (payload key ← record field), then previous_status/new_status when the event is a move,
 * then `after` picks, then the statement's extras, then the whole record under `record`.
 * The outbox keeps this order; the SQL store compiles the shape (adapters-pg events.ts).
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
