// GET /api-export (spec 4.11; DECISIONS: export): an admin's copy of every record of the caller's tenant,
// entity by entity, read in pages from one snapshot so memory stays flat however large the tenant is.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { Forbidden, type ValidationFailed } from "../errors.ts"
import { type Constraint, detail, validationFailed } from "../validation.ts"
import { CurrentTenant, type ReferenceTable } from "../ports.ts"

/** Exportable entities, in the order `all` exports them (each one's table). */
export const EXPORT_ENTITIES = {
  jobs: "jobs",
  parts: "parts",
  operations: "operations",
  cells: "cells",
  resources: "resources",
  materials: "materials",
  profiles: "profiles",
  issues: "issues",
  substeps: "substeps",
  batches: "batches",
  time_entries: "time_entries",
  webhooks: "webhooks",
  webhook_logs: "webhook_logs",
  api_keys: "api_keys"
} as const satisfies Record<string, ReferenceTable>
export type ExportEntity = keyof typeof EXPORT_ENTITIES

export type ExportFormat = "json" | "csv"

/** One tenant's records as of one instant (a read-only snapshot held while the reader's scope is open). */
export interface ExportReader {
  /** The entity's records in pages: each page their JSON objects (built by PostgreSQL) joined with commas. */
  readonly pages: (entity: ExportEntity) => Stream.Stream<string>
  /** The keys of the entity's records, in order (a CSV header even when there are none). */
  readonly columns: (entity: ExportEntity) => Effect.Effect<ReadonlyArray<string>>
}

export class ExportStore extends Context.Service<ExportStore, {
  readonly open: (tenantId: string) => Effect.Effect<ExportReader, never, Scope.Scope>
}>()("mes/domain/ExportStore") {}

export interface ExportPlan {
  readonly entities: ReadonlyArray<ExportEntity>
  readonly format: ExportFormat
  /** Opens the snapshot; it is released with the scope (when the response has been written). */
  readonly open: Effect.Effect<ExportReader, never, Scope.Scope>
}

const isEntity = (name: string): name is ExportEntity => Object.hasOwn(EXPORT_ENTITIES, name)

const invalid = (field: string, value: unknown, message: string, constraint: Constraint) =>
  validationFailed("query", [detail("query", {}, [field], constraint, message, value)])

export class Export extends Context.Service<Export, {
  /** Checks the query (`entities`, `format`) and the caller (a signed-in admin), and opens the export. */
  readonly open: (query: Readonly<Record<string, string>>) => Effect.Effect<ExportPlan, Forbidden | ValidationFailed, CurrentTenant>
}>()("mes/domain/Export") {
  static readonly layer = Layer.effect(Export, Effect.map(Effect.service(ExportStore), (store) =>
    Export.of({
      open: (query) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // spec 4.11 / 5.4: a signed-in user with the admin role; an integration key is not one
          if (tenant.via !== "user" || tenant.role !== "admin") {
            return yield* new Forbidden({ message: "Export requires a signed-in user with the admin role" })
          }
          const format = query.format ?? "json"
          if (format !== "json" && format !== "csv") {
            return yield* invalid("format", format, "format must be one of: json, csv", "ENUM_CONSTRAINT")
          }
          const raw = (query.entities ?? "").split(",").map((e) => e.trim()).filter((e) => e !== "")
          if (raw.length === 0) return yield* invalid("entities", query.entities ?? null, "entities is required: a comma-separated list or all", "NOT_NULL")
          const unknown = raw.filter((e) => e !== "all" && !isEntity(e))
          if (unknown.length > 0) {
            return yield* invalid("entities", unknown.join(","), `Unknown entit${unknown.length === 1 ? "y" : "ies"} ${unknown.join(", ")}; one of: all, ${Object.keys(EXPORT_ENTITIES).join(", ")}`, "ENUM_CONSTRAINT")
          }
          const entities = raw.includes("all") ? (Object.keys(EXPORT_ENTITIES) as Array<ExportEntity>) : [...new Set(raw as Array<ExportEntity>)]
          if (format === "csv" && entities.length !== 1) {
            return yield* invalid("entities", raw.join(","), "format=csv exports exactly one entity", "MAX_LENGTH")
          }
          return { entities, format, open: store.open(tenant.id) }
        })
    })))
}
