// /api-batches and /api-batch-lifecycle (spec 4.6), /api-time-entries (DECISIONS: records).
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import {
  AddOperations,
  Batch,
  BatchCreate,
  batchListSpec,
  BatchPatch,
  BatchStart,
  BatchStatus,
  TimeEntry,
  TimeEntryCreate,
  timeEntryListSpec,
  TimeEntryPatch,
  TimeShare
} from "@mes/domain"
import {
  apiErrors,
  crud,
  idQuery,
  okEnvelope
} from "./envelope.ts"


export class BatchesGroup extends crud("batches", "/api-batches", {
  singular: "batch",
  plural: "batches",
  record: Batch,
  list: batchListSpec,
  create: BatchCreate,
  patch: BatchPatch
}) {}

export class TimeEntriesGroup extends crud("timeEntries", "/api-time-entries", {
  singular: "time_entry",
  plural: "time_entries",
  record: TimeEntry,
  list: timeEntryListSpec,
  create: TimeEntryCreate,
  patch: TimeEntryPatch
}) {}

const BatchMoved = okEnvelope(Schema.Struct({
  batch: Batch,
  operation: Schema.Literals(["start", "stop"]),
  previous_status: BatchStatus,
  new_status: BatchStatus,
  operations_moved: Schema.Array(Schema.String),
  time_entries_opened: Schema.optionalKey(Schema.Int),
  time_distribution: Schema.optionalKey(Schema.Array(TimeShare))
}))

export class BatchLifecycleGroup extends HttpApiGroup.make("batchLifecycle").add(
  HttpApiEndpoint.post("start", "/api-batch-lifecycle/start", { query: idQuery, payload: BatchStart, success: BatchMoved, error: apiErrors }),
  HttpApiEndpoint.post("stop", "/api-batch-lifecycle/stop", { query: idQuery, payload: BatchStart, success: BatchMoved, error: apiErrors }),
  HttpApiEndpoint.post("addOperations", "/api-batch-lifecycle/add-operations", {
    query: idQuery,
    payload: AddOperations,
    success: okEnvelope(Schema.Struct({ batch: Batch })),
    error: apiErrors
  })
) {}
