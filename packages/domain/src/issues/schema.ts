// Issue / NCR records and inputs: one resource, `issue_type` selects (spec 2.4, 4.7).
import * as Schema from "effect/Schema"
import { isMaxChars, isMinChars, Name255, NonNegativeInt, opt, optNull, Text, Uuid } from "../fields.ts"
import { oneOf, text, uuid, type ListSpec } from "../query.ts"

export const IssueSeverity = Schema.Literals(["low", "medium", "high", "critical"])
export const IssueStatus = Schema.Literals(["open", "in_progress", "resolved", "closed"])
export const IssueType = Schema.Literals(["general", "ncr"])
export const NcrCategory = Schema.Literals(["material", "process", "equipment", "design", "supplier", "documentation", "other"])
export const NcrDisposition = Schema.Literals(["use_as_is", "rework", "repair", "scrap", "return_to_supplier"])
export type IssueStatus = typeof IssueStatus.Type

/** `disposition` is accepted on input and stored as `ncr_disposition` (DECISIONS: aliases). */
export const issueAliases = { disposition: "ncr_disposition" } as const

/** spec 8: ncr_number max 50 chars (an empty number names nothing). */
export const NcrNumber = Schema.String.check(isMinChars(1), isMaxChars(50))
const Description = Schema.String.check(isMinChars(1))

/** NCR fields (spec 2.4) other than ncr_number. */
const ncrFields = {
  ncr_category: optNull(NcrCategory),
  ncr_disposition: optNull(NcrDisposition),
  root_cause: optNull(Text),
  corrective_action: optNull(Text),
  preventive_action: optNull(Text),
  affected_quantity: optNull(NonNegativeInt),
  verification_required: optNull(Schema.Boolean)
}

/** Profile references; `assigned_to_id` is ours, so the spec's `assigned_to` filter has a field to match. */
const profileRefs = {
  reported_by_id: optNull(Uuid),
  assigned_to_id: optNull(Uuid),
  resolved_by_id: optNull(Uuid),
  verified_by_id: optNull(Uuid)
}

/** POST /api-issues. `severity` is also required when issue_type is ncr (a rule in the service). */
export const IssueCreate = Schema.Struct({
  operation_id: Uuid,
  title: Name255,
  description: Description,
  severity: optNull(IssueSeverity),
  status: opt(IssueStatus),
  issue_type: opt(IssueType),
  resolution_notes: optNull(Text),
  ...profileRefs,
  ncr_number: optNull(NcrNumber),
  ...ncrFields
})
export type IssueCreate = typeof IssueCreate.Type

/** PATCH /api-issues: workflow fields, texts, profile references and NCR fields; not operation_id or issue_type. */
export const IssuePatch = Schema.Struct({
  status: opt(IssueStatus),
  severity: optNull(IssueSeverity),
  title: opt(Name255),
  description: opt(Description),
  resolution_notes: optNull(Text),
  ...profileRefs,
  ncr_number: opt(NcrNumber),
  ...ncrFields
})
export type IssuePatch = typeof IssuePatch.Type

export const issueListSpec = {
  filters: {
    id: uuid,
    severity: oneOf(IssueSeverity.literals),
    status: oneOf(IssueStatus.literals),
    issue_type: oneOf(IssueType.literals),
    reported_by: uuid,
    assigned_to: uuid,
    job_id: uuid,
    part_id: uuid,
    operation_id: uuid,
    search: text
  },
  sort: ["created_at", "severity", "status", "resolved_at"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>
export type IssueListSpec = typeof issueListSpec

/** A stored issue, as the store returns it. */
export const IssueRow = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  operation_id: Uuid,
  title: Schema.String,
  description: Schema.String,
  severity: Schema.NullOr(IssueSeverity),
  status: IssueStatus,
  issue_type: IssueType,
  reported_by_id: Schema.NullOr(Uuid),
  assigned_to_id: Schema.NullOr(Uuid),
  resolved_by_id: Schema.NullOr(Uuid),
  verified_by_id: Schema.NullOr(Uuid),
  resolution_notes: Schema.NullOr(Schema.String),
  ncr_number: Schema.NullOr(Schema.String),
  ncr_category: Schema.NullOr(NcrCategory),
  ncr_disposition: Schema.NullOr(NcrDisposition),
  root_cause: Schema.NullOr(Schema.String),
  corrective_action: Schema.NullOr(Schema.String),
  preventive_action: Schema.NullOr(Schema.String),
  affected_quantity: Schema.NullOr(Schema.Int),
  verification_required: Schema.NullOr(Schema.Boolean),
  verified_at: Schema.NullOr(Schema.String),
  resolved_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type IssueRow = typeof IssueRow.Type

/** An issue in responses: the row plus `disposition`, the same value as ncr_disposition (DECISIONS). */
export const Issue = Schema.Struct({ ...IssueRow.fields, disposition: Schema.NullOr(NcrDisposition) })
export type Issue = typeof Issue.Type

