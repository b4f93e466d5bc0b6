// Shop-floor records (spec 4.12; issue 12): scrap reasons, good/scrap/rework quantities per operation,
// operator assignments, substep templates and cell downtime. Shapes: docs/DECISIONS.md "Shop floor".
import * as Schema from "effect/Schema"
import { isMaxChars, isMinChars, IsoTimestamp, Name255, NonNegativeInt, opt, optNull, PositiveInt, tenantRecord, Uuid } from "../fields.ts"
import { bool, oneOf, text, timestamp, uuid, type ListSpec } from "../query.ts"

const Stamp = Schema.String
const Text = Schema.String.check(isMinChars(1))
const Code = Schema.String.check(isMinChars(1), isMaxChars(50))

// ---- scrap reasons

export const ScrapCategory = Schema.Literals(["material", "process", "equipment", "operator", "other"])

export const ScrapReasonCreate = Schema.Struct({
  code: Code,
  description: Text,
  category: opt(ScrapCategory),
  active: opt(Schema.Boolean)
})
export const ScrapReasonPatch = Schema.Struct({
  code: opt(Code),
  description: opt(Text),
  category: opt(ScrapCategory),
  active: opt(Schema.Boolean)
})
export const scrapReasonListSpec = {
  filters: { id: uuid, category: oneOf(ScrapCategory.literals), active: bool, search: text },
  sort: ["code", "category", "created_at"],
  defaultSort: "code",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>
export const ScrapReason = tenantRecord({
  code: Schema.String,
  description: Schema.String,
  category: ScrapCategory,
  active: Schema.Boolean
})
export type ScrapReason = typeof ScrapReason.Type

// ---- quantities recorded against an operation

const quantityFields = {
  good: opt(NonNegativeInt),
  scrap: opt(NonNegativeInt),
  rework: opt(NonNegativeInt),
  scrap_reason_id: optNull(Uuid),
  user_id: optNull(Uuid),
  issue_id: optNull(Uuid),
  notes: optNull(Schema.String),
  recorded_at: opt(IsoTimestamp)
}
export const QuantityCreate = Schema.Struct({ operation_id: Uuid, ...quantityFields })
export type QuantityCreate = typeof QuantityCreate.Type
export const QuantityPatch = Schema.Struct(quantityFields)
export type QuantityPatch = typeof QuantityPatch.Type
export const quantityListSpec = {
  filters: {
    id: uuid, operation_id: uuid, part_id: uuid, job_id: uuid, scrap_reason_id: uuid, user_id: uuid, issue_id: uuid,
    from: timestamp, to: timestamp
  },
  sort: ["recorded_at", "created_at", "good", "scrap", "rework"],
  defaultSort: "recorded_at"
} satisfies ListSpec<any, any>
export const Quantity = tenantRecord({
  operation_id: Uuid,
  good: Schema.Int,
  scrap: Schema.Int,
  rework: Schema.Int,
  scrap_reason_id: Schema.NullOr(Uuid),
  user_id: Schema.NullOr(Uuid),
  issue_id: Schema.NullOr(Uuid),
  notes: Schema.NullOr(Schema.String),
  recorded_at: Stamp,
  part_id: Uuid,
  job_id: Uuid
})
export type Quantity = typeof Quantity.Type
/** Running totals of an operation or a part (sums over its recorded quantities). */
export const QuantityTotals = Schema.Struct({ good: Schema.Int, scrap: Schema.Int, rework: Schema.Int })

// ---- assignments of operators

export const ASSIGNMENT_TARGETS = ["operation_id", "part_id", "job_id", "cell_id"] as const
export const AssignmentCreate = Schema.Struct({
  user_id: Uuid,
  operation_id: opt(Uuid),
  part_id: opt(Uuid),
  job_id: opt(Uuid),
  cell_id: opt(Uuid),
  assigned_by: optNull(Uuid),
  active: opt(Schema.Boolean),
  notes: optNull(Schema.String)
})
export type AssignmentCreate = typeof AssignmentCreate.Type
/** The operator and the target stay; reassigning is a new assignment. */
export const AssignmentPatch = Schema.Struct({
  assigned_by: optNull(Uuid),
  active: opt(Schema.Boolean),
  notes: optNull(Schema.String)
})
export const TargetType = Schema.Literals(["operation", "part", "job", "cell"])
export const assignmentListSpec = {
  filters: {
    id: uuid, user_id: uuid, operation_id: uuid, part_id: uuid, job_id: uuid, cell_id: uuid, assigned_by: uuid, active: bool,
    target_type: oneOf(TargetType.literals)
  },
  // queue: due date (earliest first, none last), then priority (highest first), then oldest assignment
  sort: ["queue", "due_date", "priority", "created_at"],
  defaultSort: "queue",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>
export const Assignment = tenantRecord({
  user_id: Uuid,
  operation_id: Schema.NullOr(Uuid),
  part_id: Schema.NullOr(Uuid),
  job_id: Schema.NullOr(Uuid),
  cell_id: Schema.NullOr(Uuid),
  assigned_by: Schema.NullOr(Uuid),
  active: Schema.Boolean,
  notes: Schema.NullOr(Schema.String),
  target_type: TargetType,
  job_number: Schema.NullOr(Schema.String),
  due_date: Schema.NullOr(Schema.String),
  priority: Schema.NullOr(Schema.Int)
})
export type Assignment = typeof Assignment.Type

// ---- substep templates

export const TemplateItemInput = Schema.Struct({ description: Text, sequence: opt(PositiveInt) })
export const TemplateCreate = Schema.Struct({
  name: Name255,
  description: optNull(Schema.String),
  active: opt(Schema.Boolean),
  items: opt(Schema.Array(TemplateItemInput).check(Schema.isMaxLength(500)))
})
export type TemplateCreate = typeof TemplateCreate.Type
export const TemplatePatch = Schema.Struct({ name: opt(Name255), description: optNull(Schema.String), active: opt(Schema.Boolean) })
export const templateListSpec = {
  filters: { id: uuid, active: bool, search: text },
  sort: ["name", "created_at"],
  defaultSort: "name",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>
export const TemplateItem = tenantRecord({
  template_id: Uuid,
  description: Schema.String,
  sequence: Schema.Int
})
export type TemplateItem = typeof TemplateItem.Type
export const Template = tenantRecord({
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  items: Schema.Array(TemplateItem)
})
export type Template = typeof Template.Type
export const TemplateItemCreate = Schema.Struct({ template_id: Uuid, description: Text, sequence: PositiveInt })
export const TemplateItemPatch = Schema.Struct({ description: opt(Text), sequence: opt(PositiveInt) })
export const templateItemListSpec = {
  filters: { id: uuid, template_id: uuid },
  sort: ["sequence", "created_at"],
  defaultSort: "sequence",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>

// ---- downtime of a cell

export const DowntimeCreate = Schema.Struct({
  cell_id: Uuid,
  reason: Name255,
  planned: opt(Schema.Boolean),
  start_time: opt(IsoTimestamp),
  end_time: optNull(IsoTimestamp),
  notes: optNull(Schema.String)
})
export type DowntimeCreate = typeof DowntimeCreate.Type
export const DowntimePatch = Schema.Struct({
  reason: opt(Name255),
  planned: opt(Schema.Boolean),
  start_time: opt(IsoTimestamp),
  end_time: optNull(IsoTimestamp),
  notes: optNull(Schema.String)
})
export const downtimeListSpec = {
  filters: { id: uuid, cell_id: uuid, planned: bool, open: bool, from: timestamp, to: timestamp },
  sort: ["start_time", "end_time", "created_at"],
  defaultSort: "start_time"
} satisfies ListSpec<any, any>
export const Downtime = tenantRecord({
  cell_id: Uuid,
  reason: Schema.String,
  planned: Schema.Boolean,
  start_time: Stamp,
  end_time: Schema.NullOr(Stamp),
  notes: Schema.NullOr(Schema.String),
  duration_minutes: Schema.NullOr(Schema.Number)
})
export type Downtime = typeof Downtime.Type

// ---- OEE

export const OeeGroupBy = Schema.Literals(["day", "shift", "cell"])
export type OeeGroupBy = typeof OeeGroupBy.Type
const Ratio = Schema.NullOr(Schema.Number)
export const OeeRow = Schema.Struct({
  /** The day (YYYY-MM-DD), the shift's start (ISO timestamp) or the cell id, by group_by. */
  group: Schema.String,
  cell_id: Schema.NullOr(Uuid),
  cell_name: Schema.NullOr(Schema.String),
  from: Stamp,
  to: Stamp,
  run_minutes: Schema.Number,
  unplanned_downtime_minutes: Schema.Number,
  planned_downtime_minutes: Schema.Number,
  planned_production_minutes: Schema.Number,
  ideal_minutes: Schema.Number,
  good: Schema.Int,
  scrap: Schema.Int,
  rework: Schema.Int,
  availability: Ratio,
  performance: Ratio,
  quality: Ratio,
  oee: Ratio
})
export type OeeRow = typeof OeeRow.Type
export const Oee = Schema.Struct({
  from: Stamp,
  to: Stamp,
  group_by: OeeGroupBy,
  cell_id: Schema.NullOr(Uuid),
  rows: Schema.Array(OeeRow),
  total: OeeRow
})
