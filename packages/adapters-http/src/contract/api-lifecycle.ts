// Lifecycle endpoints (spec 4.4, 4.5): POST /api-job-lifecycle/{action}?id= and
// POST /api-operation-lifecycle/{action}?id=[&user_id=], answering the move with both statuses.
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Job, JobStatus, Operation, OperationStatus } from "@mes/domain"
import { apiErrors, okEnvelope } from "./envelope.ts"

const id = Schema.String.check(Schema.isUUID())

export const JobMoved = okEnvelope(Schema.Struct({
  job: Job,
  operation: Schema.Literals(["start", "stop", "complete", "resume"]),
  previous_status: JobStatus,
  new_status: JobStatus
}))

const jobAction = <const A extends string>(action: A) =>
  HttpApiEndpoint.post(action, `/api-job-lifecycle/${action}`, { query: { id }, success: JobMoved, error: apiErrors })

export class JobLifecycleGroup extends HttpApiGroup.make("jobLifecycle").add(
  jobAction("start"),
  jobAction("stop"),
  jobAction("complete"),
  jobAction("resume")
) {}

export const OperationMoved = okEnvelope(Schema.Struct({
  operation: Schema.Struct({
    ...Operation.fields,
    estimated_time: Schema.NullOr(Schema.Number),
    part: Schema.Struct({ id: Schema.String, part_number: Schema.String, job: Schema.Struct({ id: Schema.String, job_number: Schema.String }) })
  }),
  operation_type: Schema.Literals(["start", "pause", "resume", "complete"]),
  previous_status: OperationStatus,
  new_status: OperationStatus,
  time_entry_ended: Schema.Boolean
}))

const operationAction = <const A extends string>(action: A, query: Record<string, Schema.Top>) =>
  HttpApiEndpoint.post(action, `/api-operation-lifecycle/${action}`, { query, success: OperationMoved, error: apiErrors })

// spec 4.5: start and resume take the operator whose time entry opens
const withUser = { id, user_id: Schema.optionalKey(id) }

export class OperationLifecycleGroup extends HttpApiGroup.make("operationLifecycle").add(
  operationAction("start", withUser),
  operationAction("pause", { id }),
  operationAction("resume", withUser),
  operationAction("complete", { id })
) {}
