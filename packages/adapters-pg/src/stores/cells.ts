// Work cells (spec 4.12): plain CRUD; deletes are refused by the RESTRICT foreign keys while referenced.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Cell, type CellListQuery, CellStore } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { insertRows, updateRow } from "../rows.ts"
import { contains, orderBy } from "./common.ts"

const cellSort = { name: "c.name", sequence: "c.sequence", created_at: "c.created_at" }

export const CellStorePg = Layer.effect(CellStore, Effect.gen(function*() {
  const sql = yield* SqlClient

  return CellStore.of({
    insert: (cell) => insertRows<Cell>(sql, "cells", [cell]).pipe(Effect.map((rows) => rows[0]!), mapConstraints),

    list: (tenantId, q: CellListQuery) =>
      Effect.gen(function*() {
        const f = q.filters
        const where = [sql`c.tenant_id = ${tenantId}`]
        if (f.id !== undefined) where.push(sql`c.id = ${f.id}`)
        if (f.name !== undefined) where.push(sql`c.name ILIKE ${contains(f.name)}`)
        if (f.active !== undefined) where.push(sql`c.active = ${f.active}`)
        if (f.search !== undefined) {
          const s = contains(f.search)
          where.push(sql`(c.name ILIKE ${s} OR c.external_id ILIKE ${s})`)
        }
        const rows = yield* sql<Cell & { total: number }>`
          SELECT c.*, count(*) OVER ()::int AS total FROM cells c WHERE ${sql.and(where)}
          ${sql.literal(orderBy(cellSort, q.sort, q.order, "c"))} LIMIT ${q.limit} OFFSET ${q.offset}`
        const total = rows.length > 0
          ? rows[0]!.total
          : (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM cells c WHERE ${sql.and(where)}`)[0]!.n
        return { rows: rows.map(({ total: _t, ...cell }) => cell), total }
      }).pipe(Effect.orDie),

    get: (tenantId, id) =>
      sql<Cell>`SELECT * FROM cells WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie),

    update: (tenantId, id, changes) => updateRow<Cell>(sql, "cells", tenantId, id, changes).pipe(mapConstraints),

    remove: (tenantId, id) =>
      sql`DELETE FROM cells WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        mapConstraints
      ),

    nameTaken: (tenantId, name, exceptId) => {
      const where = [sql`tenant_id = ${tenantId}`, sql`name = ${name}`]
      if (exceptId !== undefined) where.push(sql`id <> ${exceptId}`)
      return sql`SELECT 1 FROM cells WHERE ${sql.and(where)}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
    }
  })
}))
