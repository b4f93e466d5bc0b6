// Batches of operations (spec 2.6, 4.6): nested laser sheets, saw and tube batches, finishing lots.
import * as Schema from "effect/Schema"
import { JsonObject, Name255, NonNegativeNumber, opt, optNull, Text, Uuid } from "../fields.ts"
import { oneOf, text, uuid, type ListSpec } from "../query.ts"

export const BatchType = Schema.Literals(["laser_nesting", "tube_batch", "saw_batch", "finishing_batch", "general"])
export const BatchStatus = Schema.Literals(["draft", "ready", "in_progress", "completed", "cancelled"])
export type BatchStatus = typeof BatchStatus.Type

const Url = Schema.String.check(
  Schema.makeFilter<string>((s) => {
    try {
      const u = new URL(s)
      return u.protocol === "http:" || u.protocol === "https:"
    } catch {
      return false
    }
  }, { representation: { id: "mes/isHttpUrl", payload: {} }, expected: "an http(s) URL" } as any)
)

const batchFields = {
  batch_type: opt(BatchType),
  material: optNull(Text),
  thickness_mm: optNull(NonNegativeNumber),
  parent_batch_id: optNull(Uuid),
  nesting_metadata: optNull(JsonObject),
  nesting_image_url: optNull(Url),
  layout_image_url: optNull(Url),
  notes: optNull(Text)
}

/** POST /api-batches: a new batch starts in draft (DECISIONS). */
export const BatchCreate = Schema.Struct({
  batch_number: Name255,
  cell_id: Uuid,
  ...batchFields,
  operation_ids: opt(Schema.Array(Uuid))
})
export type BatchCreate = typeof BatchCreate.Type

/**
 * PATCH /api-batches: `operation_ids` is not accepted (spec 4.6); status draft → ready, or cancelled; another batch
 * status is 409 (DECISIONS), a value that is none 422.
 */
export const BatchPatch = Schema.Struct({
  batch_number: opt(Name255),
  cell_id: opt(Uuid),
  ...batchFields,
  status: opt(BatchStatus)
})
export type BatchPatch = typeof BatchPatch.Type

export const BatchStart = Schema.Struct({ operator_id: optNull(Uuid) })
export const AddOperations = Schema.Struct({ operation_ids: Schema.Array(Uuid).check(Schema.isMinLength(1)) })

export const batchListSpec = {
  filters: {
    id: uuid,
    status: oneOf(BatchStatus.literals),
    batch_type: oneOf(BatchType.literals),
    cell_id: uuid,
    material: text,
    search: text
  },
  sort: ["created_at", "batch_number", "status"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>

export const Batch = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  batch_number: Schema.String,
  batch_type: BatchType,
  cell_id: Uuid,
  material: Schema.NullOr(Schema.String),
  thickness_mm: Schema.NullOr(Schema.Number),
  parent_batch_id: Schema.NullOr(Uuid),
  nesting_metadata: Schema.NullOr(JsonObject),
  nesting_image_url: Schema.NullOr(Schema.String),
  layout_image_url: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  status: BatchStatus,
  operator_id: Schema.NullOr(Uuid),
  started_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  /** The batch's operations in batch order. */
  operation_ids: Schema.Array(Uuid)
})
export type Batch = typeof Batch.Type

export const TimeShare = Schema.Struct({
  operation_id: Uuid,
  basis: Schema.Literals(["estimated_time", "equal"]),
  weight: Schema.Number,
  tracked_seconds: Schema.Int,
  share_seconds: Schema.Int,
  share_minutes: Schema.Number
})
export type TimeShare = typeof TimeShare.Type
