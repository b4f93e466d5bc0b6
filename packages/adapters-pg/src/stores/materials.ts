// The material catalog (spec 4.12): entries are plain CRUD; the list also shows the names parts use that no
// entry has (the material_names view); an entry live parts use, by id or by name, is not deleted (409).
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { Conflict, type CrudStore, type Material, MaterialStore } from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { mapConstraints } from "../constraints.ts"
import { contains, uuidArray } from "./common.ts"
import { crudStorePg, listPage } from "./crud.ts"

export const MaterialStorePg = Layer.effect(MaterialStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  // a catalog entry always has an id; only the list's uncatalogued names have none
  const crud = crudStorePg<Material & { readonly id: string }>(sql, {
    table: "materials",
    columns: catalog.columns("materials"),
    alias: "m",
    sort: { name: "m.name", created_at: "m.created_at" },
    filters: () => [],
    unique: (name) => sql`name = ${name}`
  })
  return MaterialStore.of({
    ...(crud as unknown as CrudStore<Material>),
    insert: (row, plan) => crud.insert(row as Material & { readonly id: string }, plan).pipe(Effect.map((m) => ({ ...m, in_catalog: true }))),
    list: (tenantId, q) =>
      listPage<Material>(sql, {
        table: "material_names",
        alias: "m",
        // names are unique in the view; uncatalogued ones have no id
        key: "name",
        where: [
          sql`m.tenant_id = ${tenantId}`,
          ...(q.filters.id !== undefined ? [sql`m.id = ${q.filters.id as string}`] : []),
          ...(q.filters.in_catalog !== undefined ? [sql`m.in_catalog = ${q.filters.in_catalog as boolean}`] : []),
          ...(q.filters.search !== undefined ? [sql`m.name ILIKE ${contains(q.filters.search as string)}`] : [])
        ],
        sort: { name: "m.name", created_at: "m.created_at" },
        query: q
      }),
    remove: (tenantId, id) =>
      sql<{ owner: string | null; used: boolean; removed: boolean }>`
        WITH ow AS (SELECT m.tenant_id, m.name FROM materials m WHERE m.id = ${id}),
        used AS (
          SELECT EXISTS (SELECT 1 FROM parts p, ow JOIN jobs j ON true
            WHERE p.tenant_id = ${tenantId} AND ow.tenant_id = ${tenantId} AND (p.material_id = ${id} OR p.material = ow.name)
              AND j.tenant_id = p.tenant_id AND j.id = p.job_id AND j.deleted_at IS NULL) AS used
        ),
        d AS (DELETE FROM materials m WHERE m.tenant_id = ${tenantId} AND m.id = ${id} AND NOT (SELECT used FROM used) RETURNING m.id)
        SELECT (SELECT tenant_id FROM ow) AS owner, (SELECT used FROM used) AS used, EXISTS (SELECT 1 FROM d) AS removed`.pipe(
        mapConstraints,
        Effect.flatMap(([row]) =>
          row!.used ? Effect.fail(new Conflict({ message: "material is used by parts and cannot be deleted" }))
          : Effect.succeed({ owner: row!.owner ?? undefined, removed: row!.removed })
        )
      ),
    names: (tenantId, ids) =>
      sql<{ id: string; name: string }>`SELECT id, name FROM materials WHERE tenant_id = ${tenantId} AND id = ANY(${uuidArray(ids)}::uuid[])`.pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.id, r.name]))),
        Effect.orDie
      )
  })
}))
