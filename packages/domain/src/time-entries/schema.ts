// Time entries (spec 2.8, DECISIONS: records): opened by operation start/resume and batch start,
// closed by pause, complete and batch stop; created, corrected and deleted by hand here.
import * as Schema from "effect/Schema"
import { IsoTimestamp, opt, optNull, Uuid } from "../fields.ts"
import { bool, uuid, type ListSpec } from "../query.ts"

export const TimeEntryCreate = Schema.Struct({
  operation_id: Uuid,
  user_id: optNull(Uuid),
  start_time: IsoTimestamp,
  end_time: optNull(IsoTimestamp)
})
export type TimeEntryCreate = typeof TimeEntryCreate.Type

export const TimeEntryPatch = Schema.Struct({
  user_id: optNull(Uuid),
  start_time: opt(IsoTimestamp),
  end_time: optNull(IsoTimestamp)
})
export type TimeEntryPatch = typeof TimeEntryPatch.Type

export const timeEntryListSpec = {
  filters: { id: uuid, operation_id: uuid, user_id: uuid, batch_id: uuid, active: bool },
  sort: ["start_time", "end_time", "created_at", "duration_minutes"],
  defaultSort: "start_time"
} satisfies ListSpec<any, any>

export const TimeEntry = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  operation_id: Uuid,
  user_id: Schema.NullOr(Uuid),
  batch_id: Schema.NullOr(Uuid),
  start_time: Schema.String,
  end_time: Schema.NullOr(Schema.String),
  duration_minutes: Schema.NullOr(Schema.Number),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type TimeEntry = typeof TimeEntry.Type
