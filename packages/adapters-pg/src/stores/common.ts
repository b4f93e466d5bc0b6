// Pieces shared by the stores: the transaction port, reference lookups and query helpers.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { References, type ReferenceTable, Tx } from "@mes/domain"
import { liveAfterJobLock, liveCondition } from "../json.ts"
import { arrayParam } from "../sql-text.ts"

/** `%text%` for ILIKE with the pattern characters of the input escaped. */
export const contains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export const TxPg = Layer.effect(Tx, Effect.gen(function*() {
  const sql = yield* SqlClient
  return Tx.of({
    transaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)) as any,
    // NO KEY UPDATE, as an UPDATE takes it: it does not wait for the key-share lock of a concurrent insert that
    // references the record (a time entry's foreign key), whose transaction may then want this lock too
    lockRows: (table, ids) =>
      ids.length === 0
        ? Effect.void
        : sql.unsafe(`SELECT 1 FROM ${table} WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`, [uuidArray(ids)]).pipe(
          Effect.asVoid,
          Effect.orDie
        )
  })
}))

/** Which tenant owns each id, with the API's notion of existence (soft-deleted jobs count as absent). */
const ownerSql = (table: ReferenceTable) =>
  `SELECT t.id, t.tenant_id FROM ${table} t WHERE t.id = ANY($1::uuid[]) AND ${liveCondition[table]("t")}`

/** PostgreSQL array literal for a uuid[] parameter (ids are validated UUIDs). */
export const uuidArray = arrayParam

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
 * Where a statement's plans come from: one plan in $1 (`ONE_PLAN`), or one per row of a CTE (`from`),
 * each under `plan` and numbered by `key` (a bulk statement's records).
 */
export interface PlanSource {
  readonly from: string
  readonly plan: string
  readonly key: string
}
export const ONE_PLAN: PlanSource = { from: "", plan: "$1::jsonb", key: "" }
/** The prefixes that select from `source` and name its key column `k` (nothing for one plan). */
const perRecord = (source: PlanSource) =>
  source.key === "" ? { from: "", key: "" } : { from: `${source.from} CROSS JOIN `, key: `${source.key} AS k, ` }

/**
 * The indexes `i` of references (`refs`: a jsonb array of {i, tbl, id}) that are not live rows of
 * the tenant: a reference check that rides along in a write's statement (spec 2.3, DECISIONS: 422).
 * With a per-record `source`, `refs` is an expression over its rows and each row says its record `k`.
 * A job, part or operation (a record under a job) is checked after a share lock on its job (liveAfterJobLock,
 * migration 0040): a write under a record whose job a concurrent delete removed finds it missing, as it would after
 * the delete. `snapshot`: checked with the statement's snapshot instead (a batch append meets the delete itself, 0039).
 */
export const missingReferences = (
  refs: string,
  tenant: string,
  tables: ReadonlyArray<ReferenceTable>,
  source: PlanSource = ONE_PLAN,
  o: { readonly snapshot?: boolean | undefined } = {}
) =>
  `SELECT ${perRecord(source).key}r.i FROM ${perRecord(source).from}jsonb_to_recordset(${refs}) r (i int, tbl text, id uuid)
   WHERE NOT ${
    tables.length === 0 ? "false" : `CASE r.tbl ${
      tables.map((t) =>
        `WHEN '${t}' THEN EXISTS (SELECT 1 FROM ${t} x WHERE x.tenant_id = ${tenant} AND x.id = r.id AND ${
          o.snapshot === true ? liveCondition[t]("x") : liveAfterJobLock(t, "x", { reference: true })
        })`
      ).join(" ")
    } ELSE false END`
  }`

/** A statement's plans, $1 (a jsonb array), one per row of the CTE `rec` (`k` numbers them from 1, `v` is the plan). */
export const PLAN_RECORDS: PlanSource = { from: "rec", plan: "rec.v", key: "rec.k" }
/** The CTE `rec` of PLAN_RECORDS. */
export const planRecords = "rec AS MATERIALIZED (SELECT e.k, e.v FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY e (v, k))"

/**
 * The CTEs of a statement over nested job plans ($1: the plans, $2: the tenant): `rec`, the plans; `bad`, each
 * plan's `refs` that are not live rows of the tenant; and `names`, its `cell_names`, each with the id of the
 * tenant's cell of that name (NULL when there is none). `bad` and `names` say their plan `k`.
 */
export const nestedPlanRecords = `${planRecords},
bad AS (${missingReferences(`${PLAN_RECORDS.plan}->'refs'`, "$2", ["cells", "profiles", "materials"], PLAN_RECORDS)}),
names AS MATERIALIZED (
  SELECT ${perRecord(PLAN_RECORDS).key}n.name, c.id FROM ${perRecord(PLAN_RECORDS).from}jsonb_array_elements_text(${PLAN_RECORDS.plan}->'cell_names') n (name)
  LEFT JOIN cells c ON c.tenant_id = $2 AND c.name = n.name
)`

/** The elements of each plan's array `key` (parts, operations) with the plan `k` and their place `n` (from 1). */
export const planElements = (key: string) =>
  `(SELECT rec.k, e.n, e.v FROM rec CROSS JOIN jsonb_array_elements(rec.v->'${key}') WITH ORDINALITY e (v, n))`

/**
 * Parts' materials settled in a sync's or nested create's statement (spec 4.12): `filled`, a part's JSON `json` whose
 * `material` is left out or null taking the name of its material_id in the tenant ($2)'s catalog; the CTE `differ`
 * over `elements` (rows `k`, `n`, `v`: the plan, the part's place from 1, its JSON; by default the parts of nested
 * plans), the parts that give a `material` other than that name, with the name, which refuse their plan
 * (`passes`, over the plan's key `k`); and `columns`, what the answer row of plan `k` says of them (read by
 * `materialsDiffer`). Only statements for plans where some part names a material_id carry them.
 */
export const partMaterials = {
  filled: (json: string) =>
    `(${json} || coalesce((SELECT jsonb_build_object('material', mt.name) FROM materials mt
      WHERE ${json}->>'material' IS NULL AND mt.tenant_id = $2 AND mt.id = (${json}->>'material_id')::uuid), '{}'))`,
  differ: (elements = planElements("parts")) => `differ AS MATERIALIZED (
  SELECT e.k, e.n, mt.name FROM ${elements} e
  JOIN materials mt ON mt.tenant_id = $2 AND mt.id = (e.v->>'material_id')::uuid
  WHERE e.v->>'material' <> mt.name
)`,
  passes: (k = "rec.k") => `${k} NOT IN (SELECT k FROM differ)`,
  columns: (k = "rec.k") => `ARRAY(SELECT (x.n - 1)::int FROM differ x WHERE x.k = ${k} ORDER BY x.n) AS differ_parts,
  ARRAY(SELECT x.name FROM differ x WHERE x.k = ${k} ORDER BY x.n) AS differ_names`
}

/** The parts whose material is not their material_id's name, from an answer row with `partMaterials.columns`. */
export const materialsDiffer = (row: { readonly differ_parts?: ReadonlyArray<number>; readonly differ_names?: ReadonlyArray<string> }) =>
  (row.differ_parts ?? []).map((part, i) => ({ part, name: row.differ_names![i]! }))

/** The condition, over a row of `rec`, that `nestedPlanRecords`' checks found nothing wrong with the plan. */
export const nestedPlanPasses = "rec.k NOT IN (SELECT k FROM bad) AND rec.k NOT IN (SELECT k FROM names WHERE id IS NULL)"

/**
 * What the checks refused, per row of `rec`: `columns` missing_refs (indexes) and missing_cells (names), empty
 * when nothing; `joins` to add to a FROM over `rec`.
 */
export const nestedPlanRefusals = {
  columns: "coalesce(r1.a, '{}') AS missing_refs, coalesce(r2.a, '{}') AS missing_cells",
  joins: `LEFT JOIN (SELECT k, array_agg(i ORDER BY i) AS a FROM bad GROUP BY k) r1 ON r1.k = rec.k
  LEFT JOIN (SELECT k, array_agg(name) AS a FROM names WHERE id IS NULL GROUP BY k) r2 ON r2.k = rec.k`
}
