// Shop-floor use cases (spec 4.12; issue 12): scrap reasons, recorded quantities, operator assignments,
// substep templates, cell downtime and OEE. Each write and its events share one transaction (outbox).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type Crud, type CrudStore, crudLayer, makeCrud } from "../crud.ts"
import { type BadRequest, Conflict, type Forbidden, type NotFound, type ValidationFailed } from "../errors.ts"
import { INT4_MAX, isoInstant, PositiveInt } from "../fields.ts"
import { CurrentTenant, References } from "../ports.ts"
import { queryInstant, requireId } from "../query.ts"
import { checkOwner, ensureOwned, type Reference } from "../references.ts"
import { decodeInput, detail, failIfAny, type ValidationDetail } from "../validation.ts"
import {
  Assignment,
  AssignmentCreate,
  assignmentListSpec,
  AssignmentPatch,
  ASSIGNMENT_TARGETS,
  Downtime,
  DowntimeCreate,
  downtimeListSpec,
  DowntimePatch,
  type OeeGroupBy,
  OeeGroupBy as OeeGroupBySchema,
  type OeeRow,
  Quantity,
  QuantityCreate,
  quantityListSpec,
  QuantityPatch,
  ScrapReason,
  ScrapReasonCreate,
  scrapReasonListSpec,
  ScrapReasonPatch,
  Template,
  TemplateCreate,
  type TemplateItem,
  TemplateItem as TemplateItemSchema,
  TemplateItemCreate,
  templateItemListSpec,
  TemplateItemPatch,
  templateListSpec,
  TemplatePatch
} from "./schema.ts"
import type { Substep } from "../substeps/schema.ts"

type Services = CurrentTenant

const refOf = (table: Reference["table"], id: string | null | undefined, field: string): Array<Reference> =>
  id == null ? [] : [{ table, id, path: [field] }]

// ---- scrap reasons

export class ScrapReasonStore extends Context.Service<ScrapReasonStore, CrudStore<ScrapReason> & {
  /** The ids among `ids` of the tenant's reasons that are inactive. */
  readonly inactive: (tenantId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
}>()("mes/domain/ScrapReasonStore") {}

/** `code` is unique per tenant (409); a reason in use is deactivated, not deleted (409). */
export class ScrapReasons extends Context.Service<ScrapReasons, Crud<ScrapReason>>()("mes/domain/ScrapReasons") {
  static readonly layer = crudLayer(ScrapReasons, ScrapReasonStore, {
    entity: "scrap_reason",
    table: "scrap_reasons",
    create: ScrapReasonCreate,
    record: ScrapReason,
    patch: ScrapReasonPatch,
    listSpec: scrapReasonListSpec,
    unique: "code"
  })
}

// ---- quantities

export class QuantityStore extends Context.Service<QuantityStore, CrudStore<Quantity>>()("mes/domain/QuantityStore") {}

const QUANTITY = "operation_quantity"

/** At least one of good, scrap, rework above 0, and scrap needs a reason (create; PATCH: the database's checks on the merged row). */
const quantityRules = (raw: unknown, input: { good?: number; scrap?: number; rework?: number; scrap_reason_id?: string | null }) => {
  const out: Array<ValidationDetail> = []
  if ((input.good ?? 0) + (input.scrap ?? 0) + (input.rework ?? 0) === 0) {
    out.push(detail(QUANTITY, raw, ["good"], "MIN_VALUE", "at least one of good, scrap and rework must be greater than 0"))
  }
  if ((input.scrap ?? 0) > 0 && input.scrap_reason_id == null) {
    out.push(detail(QUANTITY, raw, ["scrap_reason_id"], "NOT_NULL", "scrap_reason_id is required when scrap is greater than 0"))
  }
  return out
}

/** A reason given for a new record must be active (422 FK_CONSTRAINT otherwise). */
const refuseInactiveReason = (reasons: ScrapReasonStore["Service"], raw: unknown, id: string | null | undefined) =>
  Effect.gen(function*() {
    if (id == null) return
    const tenant = yield* CurrentTenant
    const inactive = yield* reasons.inactive(tenant.id, [id])
    if (inactive.length > 0) {
      return yield* failIfAny(QUANTITY, [detail(QUANTITY, raw, ["scrap_reason_id"], "FK_CONSTRAINT", `scrap reason ${id} is inactive`)])
    }
  })

const quantityRefs = (input: { operation_id?: string; scrap_reason_id?: string | null; user_id?: string | null; issue_id?: string | null }) => [
  ...refOf("operations", input.operation_id, "operation_id"),
  ...refOf("scrap_reasons", input.scrap_reason_id, "scrap_reason_id"),
  ...refOf("profiles", input.user_id, "user_id"),
  ...refOf("issues", input.issue_id, "issue_id")
]

/**
 * Good, scrap and rework recorded against an operation: an insert-only ledger whose sums are the operation's
 * and its part's running totals (no shared counter row). Emits quantity.recorded on create.
 */
export class Quantities extends Context.Service<Quantities, Crud<Quantity>>()("mes/domain/Quantities") {
  static readonly layer = Layer.effect(Quantities, Effect.gen(function*() {
    const store = yield* QuantityStore
    const reasons = yield* ScrapReasonStore
    const references = yield* References
    const decodeCreate = decodeInput(QuantityCreate, QUANTITY, { record: Quantity })
    const crud = makeCrud<Quantity>({
      entity: QUANTITY,
      table: "operation_quantities",
      create: QuantityCreate,
      record: Quantity,
      patch: QuantityPatch,
      listSpec: quantityListSpec,
      refs: quantityRefs,
      events: { created: () => ["quantity.recorded"] },
      store,
      references
    })
    return Quantities.of({
      ...crud,
      create: (raw) =>
        Effect.gen(function*() {
          const input = yield* decodeCreate(raw)
          yield* failIfAny(QUANTITY, quantityRules(raw, input))
          // the store's statement writes nothing when the reason is inactive; a refusal then names that alone, as it
          // did when the reason was read first
          return yield* crud.create(raw).pipe(
            Effect.tapErrorTag("ValidationFailed", () => refuseInactiveReason(reasons, raw, input.scrap_reason_id))
          )
        }),
      update: (id, raw) =>
        Effect.gen(function*() {
          const reason = (raw as Record<string, unknown> | null)?.scrap_reason_id
          if (typeof reason === "string") {
            // spec 7.4: 404 / 403 before 422
            yield* ensureOwned("operation_quantities", id)
            yield* refuseInactiveReason(reasons, raw, reason)
          }
          return yield* crud.update(id, raw)
        }).pipe(Effect.provideService(References, references))
    })
  }))
}

// ---- assignments

export class AssignmentStore extends Context.Service<AssignmentStore, CrudStore<Assignment>>()("mes/domain/AssignmentStore") {}

const ASSIGNMENT = "assignment"
const targetTable = { operation_id: "operations", part_id: "parts", job_id: "jobs", cell_id: "cells" } as const

/** Exactly one target: none or several is 422 FK_REQUIRED. */
const oneTarget = (raw: unknown): Array<ValidationDetail> => {
  const body = (raw ?? {}) as Record<string, unknown>
  const given = ASSIGNMENT_TARGETS.filter((t) => body[t] !== undefined && body[t] !== null)
  if (given.length === 1) return []
  const message = "an assignment has exactly one target: one of operation_id, part_id, job_id, cell_id"
  return given.length === 0
    ? [detail(ASSIGNMENT, raw, ["operation_id"], "FK_REQUIRED", message)]
    : given.slice(1).map((t) => detail(ASSIGNMENT, raw, [t], "FK_REQUIRED", message))
}

/** An operator's work queue: `GET /api-assignments?user_id=&active=true`, by due date then priority. */
export class Assignments extends Context.Service<Assignments, Crud<Assignment>>()("mes/domain/Assignments") {
  static readonly layer = Layer.effect(Assignments, Effect.gen(function*() {
    const store = yield* AssignmentStore
    const crud = makeCrud<Assignment>({
      entity: ASSIGNMENT,
      table: "assignments",
      create: AssignmentCreate,
      record: Assignment,
      patch: AssignmentPatch,
      listSpec: assignmentListSpec,
      refs: (input: Record<string, string | null | undefined>) => [
        ...refOf("profiles", input.user_id, "user_id"),
        ...ASSIGNMENT_TARGETS.flatMap((t) => refOf(targetTable[t], input[t], t)),
        ...refOf("profiles", input.assigned_by, "assigned_by")
      ],
      events: { created: () => ["assignment.created"], updated: () => ["assignment.updated"], removed: ["assignment.removed"] },
      store,
      references: yield* References
    })
    return Assignments.of({
      ...crud,
      create: (raw) =>
        Effect.gen(function*() {
          const rule = oneTarget(raw)
          if (rule.length > 0) {
            // schema errors first, with the rule's
            const decoded = yield* Effect.result(decodeInput(AssignmentCreate, ASSIGNMENT, { record: Assignment })(raw))
            const schemaDetails = Result.isFailure(decoded) ? decoded.failure.details : []
            yield* failIfAny(ASSIGNMENT, [...schemaDetails, ...rule])
          }
          return yield* crud.create(raw)
        })
    })
  }))
}

// ---- templates

export class TemplateStore extends Context.Service<TemplateStore, CrudStore<Template> & {
  /**
   * Copies the template's items into the operation's substeps (sequences after the operation's last), with a
   * step.added event each, in one statement, when both are the tenant's and the template is active; with the owners
   * of both ids (404 / 403) and whether the template is active. The substeps made, in order.
   */
  readonly apply: (tenantId: string, templateId: string, operationId: string) => Effect.Effect<TemplateApplied>
}>()("mes/domain/TemplateStore") {}
/** What applying a template found and made (TemplateStore.apply). */
export interface TemplateApplied {
  readonly templateOwner: string | undefined
  readonly operationOwner: string | undefined
  readonly active: boolean
  /** The operation's highest substep sequence when the items numbered after it would pass 2147483647 (nothing added). */
  readonly lastSequence?: number | undefined
  readonly substeps: ReadonlyArray<Substep>
}
export class TemplateItemStore extends Context.Service<TemplateItemStore, CrudStore<TemplateItem>>()("mes/domain/TemplateItemStore") {}

const TEMPLATE = "template"

/** Items of a new template: sequences default to their position; a sequence given twice is 422 UNIQUE_CONSTRAINT. */
const itemRules = (raw: unknown, items: ReadonlyArray<{ readonly sequence?: number }>) => {
  const seen = new Set<number>()
  const out: Array<ValidationDetail> = []
  items.forEach((item, i) => {
    const sequence = item.sequence ?? i + 1
    if (seen.has(sequence)) out.push(detail(TEMPLATE, raw, ["items", i, "sequence"], "UNIQUE_CONSTRAINT", `sequence ${sequence} is used by another item`, sequence))
    seen.add(sequence)
  })
  return out
}

export class Templates extends Context.Service<Templates, Crud<Template> & {
  /** POST /api-templates/apply?id=&operation_id=: the template's items as new substeps of the operation. */
  readonly apply: (query: Readonly<Record<string, string>>) => Effect.Effect<ReadonlyArray<Substep>, NotFound | Forbidden | Conflict | ValidationFailed | BadRequest, Services>
}>()("mes/domain/Templates") {
  static readonly layer = Layer.effect(Templates, Effect.gen(function*() {
    const store = yield* TemplateStore
    const references = yield* References
    const crud = makeCrud<Template>({
      entity: TEMPLATE,
      table: "substep_templates",
      create: TemplateCreate,
      record: Template,
      patch: TemplatePatch,
      listSpec: templateListSpec,
      unique: "name",
      store,
      references
    })
    const decodeCreate = decodeInput(TemplateCreate, TEMPLATE, { record: Template })
    return Templates.of({
      ...crud,
      create: (raw) =>
        Effect.gen(function*() {
          const input = yield* Effect.result(decodeCreate(raw))
          if (Result.isSuccess(input)) yield* failIfAny(TEMPLATE, itemRules(raw, input.success.items ?? []))
          return yield* crud.create(raw)
        }),
      apply: (query) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const id = yield* requireId(query)
          const operationId = yield* requireId(query, "operation_id")
          const applied = yield* store.apply(tenant.id, id, operationId)
          yield* checkOwner("substep_templates", id, applied.templateOwner)
          yield* checkOwner("operations", operationId, applied.operationOwner)
          if (!applied.active) return yield* new Conflict({ message: `template ${id} is inactive`, field: "id" })
          if (applied.lastSequence !== undefined) {
            return yield* new Conflict({
              message: `operation ${operationId}'s substeps already reach sequence ${applied.lastSequence}: the template's items ` +
                `would be numbered past ${INT4_MAX}; renumber the substeps first (nothing was added)`,
              field: "operation_id"
            })
          }
          return applied.substeps
        })
    })
  }))
}

export class TemplateItems extends Context.Service<TemplateItems, Crud<TemplateItem>>()("mes/domain/TemplateItems") {
  static readonly layer = Layer.effect(TemplateItems, Effect.gen(function*() {
    return TemplateItems.of(makeCrud<TemplateItem>({
      entity: "template_item",
      table: "substep_template_items",
      create: TemplateItemCreate,
      record: TemplateItemSchema,
      patch: TemplateItemPatch,
      listSpec: templateItemListSpec,
      // spec 7.4: a sequence taken in the template is 409 even when other fields are invalid
      unique: { field: "sequence", within: "template_id", candidate: Schema.is(PositiveInt) },
      refs: (input: { template_id?: string }) => refOf("substep_templates", input.template_id, "template_id"),
      store: yield* TemplateItemStore,
      references: yield* References
    }))
  }))
}

// ---- downtime

export class DowntimeStore extends Context.Service<DowntimeStore, CrudStore<Downtime>>()("mes/domain/DowntimeStore") {}

const DOWNTIME = "downtime"

/** downtime.started when recorded, downtime.ended when its end_time is first set (on create too). */
export class DowntimeRecords extends Context.Service<DowntimeRecords, Crud<Downtime>>()("mes/domain/DowntimeRecords") {
  static readonly layer = Layer.effect(DowntimeRecords, Effect.gen(function*() {
    const store = yield* DowntimeStore
    const decodeCreate = decodeInput(DowntimeCreate, DOWNTIME, { record: Downtime })
    const crud = makeCrud<Downtime>({
      entity: DOWNTIME,
      table: "downtime",
      create: DowntimeCreate,
      record: Downtime,
      patch: DowntimePatch,
      listSpec: downtimeListSpec,
      refs: (input: { cell_id?: string }) => refOf("cells", input.cell_id, "cell_id"),
      events: {
        created: (d: { end_time?: string | null }) => d.end_time == null ? ["downtime.started"] : ["downtime.started", "downtime.ended"],
        // written only when the downtime was open before the PATCH (the store's condition, after its row lock)
        updated: (patch: { end_time?: string | null }) => patch.end_time != null ? ["downtime.ended"] : []
      },
      store,
      references: yield* References
    })
    return DowntimeRecords.of({
      ...crud,
      create: (raw) =>
        Effect.gen(function*() {
          const input = yield* Effect.result(decodeCreate(raw))
          if (Result.isSuccess(input)) {
            const { start_time, end_time } = input.success
            const start = start_time === undefined ? Date.now() : isoInstant(start_time)
            if (end_time != null && isoInstant(end_time) < start) {
              yield* failIfAny(DOWNTIME, [detail(DOWNTIME, raw, ["end_time"], "MIN_VALUE", "end_time must not be before start_time")])
            }
          }
          return yield* crud.create(raw)
        })
    })
  }))
}

// ---- OEE

/** What the store sums per group: the inputs of the ratios. */
export type OeeInputs = Omit<OeeRow, "availability" | "performance" | "quality" | "oee" | "planned_production_minutes">

export class OeeStore extends Context.Service<OeeStore, {
  readonly inputs: (tenantId: string, q: { readonly cellId: string | null; readonly from: string; readonly to: string; readonly groupBy: OeeGroupBy }) =>
    Effect.Effect<ReadonlyArray<OeeInputs>>
}>()("mes/domain/OeeStore") {}

/** `n` to `digits` decimals; from 2^52 on a double has no fraction left to round (and `n × 10^digits` may overflow). */
const round = (n: number, digits = 4) => (Math.abs(n) >= 2 ** 52 ? n : Math.round(n * 10 ** digits) / 10 ** digits)
const ratio = (num: number, den: number) => (den > 0 ? round(num / den) : null)

/**
 * The ratios from their inputs (docs/DECISIONS.md "OEE"): planned production time = run time + unplanned
 * downtime; availability = run / planned production; performance = ideal minutes of what was recorded / run;
 * quality = good / (good + scrap + rework); OEE = availability × performance × quality (null where a
 * denominator is 0).
 */
export const oeeRow = (i: OeeInputs): OeeRow => {
  const planned = i.run_minutes + i.unplanned_downtime_minutes
  const availability = ratio(i.run_minutes, planned)
  const performance = ratio(i.ideal_minutes, i.run_minutes)
  const quality = ratio(i.good, i.good + i.scrap + i.rework)
  return {
    group: i.group,
    cell_id: i.cell_id,
    cell_name: i.cell_name,
    from: i.from,
    to: i.to,
    run_minutes: round(i.run_minutes, 2),
    unplanned_downtime_minutes: round(i.unplanned_downtime_minutes, 2),
    planned_downtime_minutes: round(i.planned_downtime_minutes, 2),
    planned_production_minutes: round(planned, 2),
    ideal_minutes: round(i.ideal_minutes, 2),
    good: i.good,
    scrap: i.scrap,
    rework: i.rework,
    availability,
    performance,
    quality,
    oee: availability === null || performance === null || quality === null ? null : round(availability * performance * quality)
  }
}

const sumInputs = (rows: ReadonlyArray<OeeInputs>, base: Pick<OeeInputs, "group" | "cell_id" | "cell_name" | "from" | "to">): OeeInputs => ({
  ...base,
  run_minutes: rows.reduce((s, r) => s + r.run_minutes, 0),
  unplanned_downtime_minutes: rows.reduce((s, r) => s + r.unplanned_downtime_minutes, 0),
  planned_downtime_minutes: rows.reduce((s, r) => s + r.planned_downtime_minutes, 0),
  ideal_minutes: rows.reduce((s, r) => s + r.ideal_minutes, 0),
  good: rows.reduce((s, r) => s + r.good, 0),
  scrap: rows.reduce((s, r) => s + r.scrap, 0),
  rework: rows.reduce((s, r) => s + r.rework, 0)
})

/**
 * 409 when a row's number is past the largest double (ideal minutes of estimates near it, or a performance or OEE
 * above it): JSON has no such number, and the report would carry null or fail. Correcting the estimates, or a window
 * or cell without those quantities, answers it again.
 */
const unrepresentable = (rows: ReadonlyArray<OeeRow>) => {
  for (const row of rows) {
    for (const [field, value] of Object.entries(row)) {
      if (typeof value === "number" && !Number.isFinite(value)) {
        return new Conflict({
          message: `the OEE report's ${field} of ${row.group} is past the largest number it can carry (${Number.MAX_VALUE}): ` +
            "the estimated_time_minutes of operations with quantities there are too large; correct them, or report another window or cell"
        })
      }
    }
  }
  return undefined
}

const DAY = 86_400_000
/** The longest window per grouping (a day per row, three shifts a day, or one row per cell). */
const MAX_DAYS: Record<OeeGroupBy, number> = { day: 366, shift: 93, cell: 366 }
const OEE_QUERY = "query"

export class OeeReports extends Context.Service<OeeReports, {
  /** GET /api-oee?cell_id=&from=&to=&group_by=day|shift|cell */
  readonly report: (query: Readonly<Record<string, string>>) => Effect.Effect<unknown, NotFound | Forbidden | Conflict | ValidationFailed | BadRequest, Services>
}>()("mes/domain/OeeReports") {
  static readonly layer = Layer.effect(OeeReports, Effect.gen(function*() {
    const store = yield* OeeStore
    const references = yield* References
    const isGroupBy = (s: string): s is OeeGroupBy => (OeeGroupBySchema.literals as ReadonlyArray<string>).includes(s)
    const instant = (raw: string | undefined, field: string, fallback: number, details: Array<ValidationDetail>) => {
      if (raw === undefined || raw === "") return fallback
      const t = queryInstant(field, raw)
      if (typeof t === "number") return t
      details.push(t)
      return NaN
    }
    return OeeReports.of({
      report: (query) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const details: Array<ValidationDetail> = []
          const groupBy = query.group_by ?? "day"
          if (!isGroupBy(groupBy)) details.push(detail(OEE_QUERY, {}, ["group_by"], "ENUM_CONSTRAINT", "group_by must be one of: day, shift, cell", groupBy))
          const now = Date.now()
          const to = instant(query.to, "to", now, details)
          const from = instant(query.from, "from", Math.floor(to / DAY) * DAY - 6 * DAY, details)
          if (details.length === 0 && from >= to) details.push(detail(OEE_QUERY, {}, ["to"], "MIN_VALUE", "to must be after from", query.to ?? null))
          if (details.length === 0 && isGroupBy(groupBy) && to - from > MAX_DAYS[groupBy] * DAY) {
            details.push(detail(OEE_QUERY, {}, ["from"], "MAX_VALUE", `a ${groupBy} report spans at most ${MAX_DAYS[groupBy]} days`, query.from ?? null))
          }
          yield* failIfAny(OEE_QUERY, details)
          const cellId = query.cell_id === undefined || query.cell_id === "" ? null : yield* requireId(query, "cell_id")
          if (cellId !== null) yield* ensureOwned("cells", cellId)
          const window = { from: new Date(from).toISOString(), to: new Date(to).toISOString() }
          const inputs = yield* store.inputs(tenant.id, { cellId, ...window, groupBy: groupBy as OeeGroupBy })
          const rows = inputs.map(oeeRow)
          const total = oeeRow(sumInputs(inputs, { group: "total", cell_id: cellId, cell_name: inputs[0]?.cell_id === cellId ? inputs[0]?.cell_name ?? null : null, ...window }))
          const refused = unrepresentable([...rows, total])
          if (refused !== undefined) return yield* refused
          return { ...window, group_by: groupBy, cell_id: cellId, rows, total }
        }).pipe(Effect.provideService(References, references))
    })
  }))
}
