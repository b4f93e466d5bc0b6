// Tenant rules: every reference resolves inside the caller's tenant (spec 2.3, 5.6).
// A missing or foreign id is a 422 FK_CONSTRAINT detail, never a stored link (DECISIONS).
import * as Effect from "effect/Effect"
import { Forbidden, NotFound } from "./errors.ts"
import { CurrentTenant, References, type ReferenceTable } from "./ports.ts"
import { detail, type Path, type ValidationDetail } from "./validation.ts"

export interface Reference {
  readonly table: ReferenceTable
  readonly id: string
  readonly path: Path
}

/** A table's records as messages name them. */
export const label: Record<ReferenceTable, string> = {
  jobs: "job",
  parts: "part",
  operations: "operation",
  cells: "cell",
  profiles: "profile",
  time_entries: "time entry",
  batches: "batch",
  issues: "issue",
  substeps: "substep",
  webhooks: "webhook",
  webhook_logs: "webhook log",
  api_keys: "API key",
  resources: "resource",
  materials: "material",
  scrap_reasons: "scrap reason",
  operation_quantities: "operation quantity",
  assignments: "assignment",
  substep_templates: "template",
  substep_template_items: "template item",
  downtime: "downtime",
  part_images: "part image"
}

/** Resolves all references with one query per table and returns a detail for each that is not the tenant's. */
export const checkReferences = (root: string, input: unknown, refs: ReadonlyArray<Reference>) =>
  Effect.gen(function*() {
    if (refs.length === 0) return [] as Array<ValidationDetail>
    const tenant = yield* CurrentTenant
    const references = yield* References
    const tables = [...new Set(refs.map((r) => r.table))]
    const owners = new Map(
      yield* Effect.forEach(tables, (t) =>
        references.owners(t, [...new Set(refs.filter((r) => r.table === t).map((r) => r.id))]).pipe(
          Effect.map((m) => [t, m] as const)
        ), { concurrency: "unbounded" })
    )
    return refs.filter((r) => owners.get(r.table)?.get(r.id) !== tenant.id).map((r) => referenceDetail(root, input, r))
  })

/** References as a store checks them inside its statement (`i` indexes this list). */
export const checkedReferences = (refs: ReadonlyArray<Reference>) => refs.map((r, i) => ({ i, tbl: r.table, id: r.id }))

/** The 422 detail for a reference that is not a record of the caller's tenant (DECISIONS). */
export const referenceDetail = (root: string, input: unknown, r: Reference): ValidationDetail =>
  detail(root, input, r.path, "FK_CONSTRAINT", `${label[r.table]} ${r.id} does not exist in this tenant`, r.id)

/** The 422 details of the references a store's statement found missing: `indexes` into `refs`, as checkedReferences numbered them. */
export const missingReferenceDetails = (root: string, input: unknown, refs: ReadonlyArray<Reference>, indexes: ReadonlyArray<number>) =>
  indexes.map((i) => referenceDetail(root, input, refs[i]!))

/** 404 when no tenant has the record (`owner` undefined), 403 when another tenant does (spec 5.6, 7.4). */
export const checkOwner = (table: ReferenceTable, id: string, owner: string | undefined) =>
  Effect.gen(function*() {
    const tenant = yield* CurrentTenant
    if (owner === undefined) return yield* new NotFound({ entity: label[table], id })
    if (owner !== tenant.id) {
      return yield* new Forbidden({ message: `${label[table]} ${id} belongs to another tenant` })
    }
  })

/** 404 when no tenant has the record, 403 when another tenant does, with a query of its own. */
export const ensureOwned = (table: ReferenceTable, id: string) =>
  Effect.gen(function*() {
    yield* checkOwner(table, id, yield* (yield* References).ownerOf(table, id))
  })
