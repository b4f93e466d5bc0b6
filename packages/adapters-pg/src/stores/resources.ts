// Resources (spec 4.12): plain CRUD, lists filtered by type, status, location and a search.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { RecordSyncStore, type Resource, ResourceStore, type SyncAction } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { statementCache } from "../sql-text.ts"
import { givenKey, syncRecordsStatement } from "./sync.ts"
import { Catalog } from "../catalog.ts"
import { contains } from "./common.ts"
import { crudStorePg } from "./crud.ts"

export const ResourceStorePg = Layer.effect(ResourceStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return ResourceStore.of(crudStorePg<Resource>(sql, {
    table: "resources",
    columns: catalog.columns("resources"),
    alias: "r",
    sort: { name: "r.name", type: "r.type", status: "r.status", location: "r.location", created_at: "r.created_at" },
    filters: (f) => [
      ...(f.id !== undefined ? [sql`r.id = ${f.id as string}`] : []),
      ...(f.type !== undefined ? [sql`r.type = ${f.type as string}`] : []),
      ...(f.status !== undefined ? [sql`r.status = ${f.status as string}`] : []),
      ...(f.location !== undefined ? [sql`r.location ILIKE ${contains(f.location as string)}`] : []),
      ...(f.external_source !== undefined ? [sql`r.external_source = ${f.external_source as string}`] : []),
      ...(f.search !== undefined
        ? [sql`(r.name ILIKE ${contains(f.search as string)} OR r.identifier ILIKE ${contains(f.search as string)}
            OR r.description ILIKE ${contains(f.search as string)} OR r.external_id ILIKE ${contains(f.search as string)})`]
        : [])
    ],
    // no field of a resource is unique but its external key
    unique: () => sql`false`
  }))
}))

/** Cells and resources sync (spec 4.10): one statement for one record or a bulk of them, cached by what they give. */
export const RecordSyncStorePg = Layer.effect(RecordSyncStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  const statements = statementCache()
  return RecordSyncStore.of({
    upsert: (table, rows) =>
      Effect.gen(function*() {
        const statement = statements(`${table} ${givenKey(rows, catalog.columns(table))}`, () => syncRecordsStatement(table, rows, catalog))
        const outcomes = yield* sql.unsafe<{ id: string; action: SyncAction }>(statement, [JSON.stringify(rows), rows[0]!.tenant_id])
        return outcomes.map((r) => ({ id: r.id, action: r.action }))
      }).pipe(mapConstraints)
  })
}))
