// Part images (issue 12): plain CRUD whose create and PATCH keep one primary image per part in their statement.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type PartImage, PartImageStore } from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { mapConstraints } from "../constraints.ts"
import { liveCondition, recordJson } from "../json.ts"
import { recordWrites } from "../moves.ts"
import { givenKeys, ident } from "../sql-text.ts"
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
  const writes = recordWrites<PartImage>(sql, { table: "part_images", columns, refTables: ["parts"], ctes: [["unset", UNSET_OTHERS]] })
  return PartImageStore.of({
    ...base,
    // a part's first image is its primary one unless the create says otherwise; a primary one unsets the others
    insert: (row) => {
      const cols = givenKeys([row]).filter((c) => c !== "is_primary")
      return sql.unsafe<{ json: string }>(
        `WITH r AS (SELECT * FROM jsonb_populate_record(null::part_images, $1::jsonb)),
         m AS (
           INSERT INTO part_images AS t (${cols.map(ident).join(", ")}, is_primary)
           SELECT ${cols.map((c) => `r.${ident(c)}`).join(", ")},
             coalesce(($1::jsonb ->> 'is_primary')::boolean,
               NOT EXISTS (SELECT 1 FROM part_images x WHERE x.tenant_id = r.tenant_id AND x.part_id = r.part_id AND x.is_primary))
           FROM r
           RETURNING t.*, ${recordJson("part_images", "t")} AS json
         ), unset AS (${UNSET_OTHERS})
         SELECT json FROM m`,
        [JSON.stringify(row)]
      ).pipe(Effect.map(([r]) => JSON.parse(r!.json) as PartImage), mapConstraints)
    },
    patch: (tenantId, id, changes, refs) => writes.patch(tenantId, id, changes, [], refs).pipe(mapConstraints),
    lockKey: (tenantId, id) =>
      sql<{ storage_key: string }>`SELECT storage_key FROM part_images i WHERE i.tenant_id = ${tenantId} AND i.id = ${id}
        AND ${sql.literal(liveCondition.part_images("i"))} FOR UPDATE OF i`.pipe(
        Effect.map((rows) => rows[0]?.storage_key),
        Effect.orDie
      )
  })
}))
