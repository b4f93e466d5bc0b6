// Pieces shared by the stores: the transaction port, reference lookups and query helpers.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { References, type ReferenceTable, Tx } from "@mes/domain"
import { liveCondition } from "../json.ts"

/** `%text%` for ILIKE with the pattern characters of the input escaped. */
export const contains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export const TxPg = Layer.effect(Tx, Effect.gen(function*() {
  const sql = yield* SqlClient
  return Tx.of({ transaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)) as any })
}))

/** Which tenant owns each id, with the API's notion of existence (soft-deleted jobs count as absent). */
const ownerSql = (table: ReferenceTable) =>
  `SELECT t.id, t.tenant_id FROM ${table} t WHERE t.id = ANY($1::uuid[]) AND ${liveCondition[table]("t")}`

/** PostgreSQL array literal for a uuid[] parameter (ids are validated UUIDs). */
export const uuidArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`

export const ReferencesPg = Layer.effect(References, Effect.gen(function*() {
  const sql = yield* SqlClient
  const owners = (table: ReferenceTable, ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed(new Map<string, string>())
      : sql.unsafe<{ id: string; tenant_id: string }>(ownerSql(table), [uuidArray(ids)]).pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.id, r.tenant_id]))),
        Effect.orDie
      )
  return References.of({
    owners,
    ownerOf: (table, id) => owners(table, [id]).pipe(Effect.map((m) => m.get(id))),
    cellsByName: (tenantId, names) =>
      sql<{ id: string; name: string }>`SELECT id, name FROM cells WHERE tenant_id = ${tenantId} AND name IN ${sql.in(names)}`.pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.name, r.id]))),
        Effect.orDie
      )
  })
}))

/**
 * The indexes `i` of references (`refs`: a jsonb array of {i, tbl, id}) that are not live rows of
 * the tenant: a reference check that rides along in a write's statement (spec 2.3, DECISIONS: 422).
 */
export const missingReferences = (refs: string, tenant: string, tables: ReadonlyArray<ReferenceTable>) =>
  `SELECT r.i FROM jsonb_to_recordset(${refs}) r (i int, tbl text, id uuid)
   WHERE NOT ${
    tables.length === 0 ? "false" : `CASE r.tbl ${
      tables.map((t) =>
        `WHEN '${t}' THEN EXISTS (SELECT 1 FROM ${t} x WHERE x.tenant_id = ${tenant} AND x.id = r.id AND ${liveCondition[t]("x")})`
      ).join(" ")
    } ELSE false END`
  }`
