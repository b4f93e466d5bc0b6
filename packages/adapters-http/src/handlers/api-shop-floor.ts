// Shop-floor endpoints (issue 12): plain resources, a template's application and the OEE report.
import * as Effect from "effect/Effect"
import { Assignments, DowntimeRecords, OeeReports, Quantities, ScrapReasons, TemplateItems, Templates } from "@mes/domain"
import { type ApiRequest, ok } from "../server.ts"
import { resourceHandlers } from "./shared.ts"

export const shopFloorHandlers = Effect.gen(function*() {
  const templates = yield* Templates
  const oee = yield* OeeReports
  return {
    ...resourceHandlers("scrapReasons", { singular: "scrap_reason", plural: "scrap_reasons" }, yield* ScrapReasons),
    ...resourceHandlers("quantities", { singular: "operation_quantity", plural: "operation_quantities" }, yield* Quantities),
    ...resourceHandlers("assignments", { singular: "assignment", plural: "assignments" }, yield* Assignments),
    ...resourceHandlers("templates", { singular: "template", plural: "templates" }, templates),
    ...resourceHandlers("templateItems", { singular: "template_item", plural: "template_items" }, yield* TemplateItems),
    ...resourceHandlers("downtime", { singular: "downtime", plural: "downtimes" }, yield* DowntimeRecords),
    "templates.apply": ({ query }: ApiRequest) => templates.apply(query).pipe(Effect.map((substeps) => ok({ substeps }, 201))),
    "oee.report": ({ query }: ApiRequest) => oee.report(query).pipe(Effect.map((report) => ok(report)))
  }
})
