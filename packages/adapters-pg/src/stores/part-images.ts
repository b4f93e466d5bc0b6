// Part images (issue 12): plain CRUD whose create and PATCH keep one primary image per part in their statement.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type PartImage, PartImageStore } from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { mapConstraints } from "../constraints.ts"
import { liveCondition } from "../json.ts"
import { recordWrites } from "../moves.ts"
import { crudStorePg } from "./crud.ts"

/** The other images of the part of `m` stop being primary when `m` becomes it. */
const UNSET_OTHERS = `UPDATE part_images o SET is_primary = false, updated_at = now() FROM m
  WHERE m.is_primary AND o.tenant_id = m.tenant_id AND o.part_id = m.part_id AND o.id <> m.id AND o.is_primary`

export const PartImageStorePg = Layer.effect(PartImageStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const columns = (yield* Catalog).columns("part_images")
  const base = crudStorePg<PartImage>(sql, {
    table: "part_images",
    columns,
    alias: "i",
    refTables: ["parts"],
    sort: { created_at: "i.created_at", is_primary: "i.is_primary" },
    filters: (f) => [
      sql.literal(liveCondition.part_images("i")),
      ...(f.id !== undefined ? [sql`i.id = ${f.id as string}`] : []),
      ...(f.part_id !== undefined ? [sql`i.part_id = ${f.part_id as string}`] : []),
      ...(f.is_primary !== undefined ? [sql`i.is_primary = ${f.is_primary as boolean}`] : [])
    ],
    unique: (value) => sql`storage_key = ${value}`
  })
  const writes = recordWrites<PartImage>(sql, {
    table: "part_images",
    columns,
    refTables: ["parts"],
    ctes: [["unset", UNSET_OTHERS]],
    insertValues: {
      is_primary: `coalesce(($1::jsonb ->> 'is_primary')::boolean,
        NOT EXISTS (SELECT 1 FROM part_images x WHERE x.tenant_id = r.tenant_id AND x.part_id = r.part_id AND x.is_primary))`
    }
  })
  return PartImageStore.of({
    ...base,
    // a part's first image is its primary one unless the create says otherwise; a primary one unsets the others; the
    // part is checked in the same statement
    insert: (row, plan) => writes.create(row, plan).pipe(mapConstraints),
    patch: (tenantId, id, changes, refs) => writes.patch(tenantId, id, changes, [], refs).pipe(mapConstraints),
    removeWithKey: (tenantId, id) =>
      writes.remove(tenantId, id, [], "storage_key").pipe(
        Effect.map(({ value, ...outcome }) => ({ ...outcome, storageKey: value })),
        mapConstraints
      )
  })
}))
