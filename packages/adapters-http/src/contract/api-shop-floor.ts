// Shop-floor endpoints (spec 4.12; issue 12; shapes in docs/DECISIONS.md "Shop floor"): scrap reasons, recorded
// quantities, operator assignments, substep templates and their items, cell downtime, OEE.
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import {
  Assignment,
  AssignmentCreate,
  assignmentListSpec,
  AssignmentPatch,
  Downtime,
  DowntimeCreate,
  downtimeListSpec,
  DowntimePatch,
  Oee,
  OeeGroupBy,
  Quantity,
  QuantityCreate,
  quantityListSpec,
  QuantityPatch,
  ScrapReason,
  ScrapReasonCreate,
  scrapReasonListSpec,
  ScrapReasonPatch,
  Substep,
  Template,
  TemplateCreate,
  TemplateItem,
  TemplateItemCreate,
  templateItemListSpec,
  TemplateItemPatch,
  templateListSpec,
  TemplatePatch
} from "@mes/domain"
import { apiErrors, created, crud, okEnvelope } from "./envelope.ts"

export { assignmentListSpec, downtimeListSpec, quantityListSpec, scrapReasonListSpec, templateItemListSpec, templateListSpec }

export class ScrapReasonsGroup extends crud("scrapReasons", "/api-scrap-reasons", {
  singular: "scrap_reason",
  plural: "scrap_reasons",
  record: ScrapReason,
  list: scrapReasonListSpec,
  create: ScrapReasonCreate,
  patch: ScrapReasonPatch
}) {}

export class QuantitiesGroup extends crud("quantities", "/api-operation-quantities", {
  singular: "operation_quantity",
  plural: "operation_quantities",
  record: Quantity,
  list: quantityListSpec,
  create: QuantityCreate,
  patch: QuantityPatch
}) {}

export class AssignmentsGroup extends crud("assignments", "/api-assignments", {
  singular: "assignment",
  plural: "assignments",
  record: Assignment,
  list: assignmentListSpec,
  create: AssignmentCreate,
  patch: AssignmentPatch
}) {}

export class TemplatesGroup extends crud("templates", "/api-templates", {
  singular: "template",
  plural: "templates",
  record: Template,
  list: templateListSpec,
  create: TemplateCreate,
  patch: TemplatePatch
}).add(
  HttpApiEndpoint.post("apply", "/api-templates/apply", {
    query: { id: Schema.String.check(Schema.isUUID()), operation_id: Schema.String.check(Schema.isUUID()) },
    success: created(okEnvelope(Schema.Struct({ substeps: Schema.Array(Substep) }))),
    error: apiErrors
  })
) {}

export class TemplateItemsGroup extends crud("templateItems", "/api-templates/items", {
  singular: "template_item",
  plural: "template_items",
  record: TemplateItem,
  list: templateItemListSpec,
  create: TemplateItemCreate,
  patch: TemplateItemPatch
}) {}

export class DowntimeGroup extends crud("downtime", "/api-downtime", {
  singular: "downtime",
  plural: "downtimes",
  record: Downtime,
  list: downtimeListSpec,
  create: DowntimeCreate,
  patch: DowntimePatch
}) {}

export class OeeGroup extends HttpApiGroup.make("oee").add(
  HttpApiEndpoint.get("report", "/api-oee", {
    query: {
      cell_id: Schema.optionalKey(Schema.String.check(Schema.isUUID())),
      from: Schema.optionalKey(Schema.String),
      to: Schema.optionalKey(Schema.String),
      group_by: Schema.optionalKey(OeeGroupBy)
    },
    success: okEnvelope(Oee),
    error: apiErrors
  })
) {}
