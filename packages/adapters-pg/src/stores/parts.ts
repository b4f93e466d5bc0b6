// Parts (spec 4.2): list with the job's number as a filter, parent chains, sync upserts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import {
  type SyncAction, moveEvent, type Part, type PartListQuery, PartRefused, PartStore } from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { mapConstraints, mapPartDeleteConstraints } from "../constraints.ts"
import { syncPartsKey, syncPartsStatement } from "./sync.ts"
import { chainHolds, parentIn } from "../rows.ts"
import { insertDefaults, recordWrites } from "../moves.ts"
import { statementCache } from "../sql-text.ts"
import { contains, materialsDiffer } from "./common.ts"
import { listPage } from "./crud.ts"
import { partDefaults } from "./jobs.ts"
import { liveCondition, readOwned, withQuantities } from "../json.ts"

const partSort = {
  part_number: "p.part_number",
  material: "p.material",
  status: "p.status",
  created_at: "p.created_at",
  quantity: "p.quantity"
}

// parts of soft-deleted jobs are gone from queries with their job (spec 4.1 DELETE)
const LIVE = liveCondition.parts("p")

export const PartStorePg = Layer.effect(PartStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  const syncStatements = statementCache()
  // The material rules of a create and a PATCH, over SQL expressions (the parent's: `parentIn`): the name of the
  // tenant's material `id`; a `material` given that is not that name.
  const materialNamed = (tenant: string, id: string) => `SELECT mt.name FROM materials mt WHERE mt.tenant_id = ${tenant} AND mt.id = ${id}::uuid`
  const materialDiffers = (given: string, name: string) => `coalesce(${given} <> ${name}, false)`

  // a PATCH's parent ($3's parent_part_id, else the part numbered $5) among the parts of the part's job, found once
  // (pp): asked for and not found, or with the part in its chain (itself included), nothing changes; and its
  // material_id's name: `material` when the PATCH gives none (null), else it must be that name
  const asked = "($5::text IS NOT NULL OR $3::jsonb->>'parent_part_id' IS NOT NULL)"
  const jobOfPart = "(SELECT me.job_id FROM parts me WHERE me.tenant_id = $1 AND me.id = $2)"
  const patchMaterial = materialNamed("$1", "($3::jsonb->>'material_id')")
  const writes = recordWrites<Part>(sql, {
    table: "parts",
    columns: catalog.columns("parts"),
    refTables: ["cells", "materials"],
    checks: [
      ["pp", `${parentIn("$1", jobOfPart, "($3::jsonb->>'parent_part_id')", "$5::text")} AND ${asked}`],
      ["pc", `SELECT ${asked} AND NOT EXISTS (SELECT 1 FROM pp) AS no_parent, (SELECT pp.id FROM pp) AS parent_id,
        coalesce((SELECT ${chainHolds("parts", "parent_part_id", "$1", "pp.id", "$2")} FROM pp), false) AS cycle,
        (${patchMaterial}) AS material_name, ${materialDiffers("$3::jsonb->>'material'", `(${patchMaterial})`)} AS material_differs`]
    ],
    patchValues: { parent_part_id: "(SELECT pc.parent_id FROM pc)", material: "coalesce(r.material, (SELECT pc.material_name FROM pc))" },
    guard: "NOT (SELECT pc.no_parent OR pc.cycle OR pc.material_differs FROM pc)",
    select: (["parent_id", "no_parent", "cycle", "material_name", "material_differs"] as const).map((c) => [c, `(SELECT pc.${c} FROM pc)`] as const)
  })
  // a create: the job checked with the cell and material; the parent ($1's parent_part_id, else the part numbered
  // $4) a part of the job; material the name of material_id, or taken from it; the defaults, and the month's usage
  // row (no counter row)
  const given = (field: string) => `($1::jsonb->>'${field}')`
  const creates = recordWrites<Part>(sql, {
    table: "parts",
    columns: catalog.columns("parts"),
    refTables: ["jobs", "cells", "materials"],
    createChecks: {
      ctes: [
        ["par", parentIn("$3::uuid", `${given("job_id")}::uuid`, given("parent_part_id"), "$4::text")],
        ["mat", materialNamed("$3::uuid", given("material_id"))],
        ["pc", `SELECT (${given("parent_part_id")} IS NOT NULL OR $4::text IS NOT NULL) AND NOT EXISTS (SELECT 1 FROM par) AS no_parent,
          (SELECT mat.name FROM mat) AS material_name, ${materialDiffers(given("material"), "(SELECT mat.name FROM mat)")} AS material_differs`]
      ],
      insertWhen: "NOT (SELECT pc.no_parent OR pc.material_differs FROM pc)"
    },
    insertValues: {
      ...insertDefaults(partDefaults),
      parent_part_id: "(SELECT par.id FROM par)",
      material: "coalesce(r.material, (SELECT mat.name FROM mat))"
    },
    ctes: [["u", "INSERT INTO part_usage (tenant_id, parts) SELECT m.tenant_id, 1 FROM m"]],
    select: [["no_parent", "(SELECT pc.no_parent FROM pc)"], ["material_name", "(SELECT pc.material_name FROM pc)"], [
      "material_differs",
      "(SELECT pc.material_differs FROM pc)"
    ]]
  })
  return PartStore.of({
    create: (part, plan, parentNumber) =>
      creates.createRow(part, plan, [parentNumber ?? null]).pipe(
        Effect.flatMap((r) =>
          r.json === null
            ? Effect.fail(
              new PartRefused({
                missingRefs: r.missing_refs,
                noParent: r.no_parent === true,
                materialDiffers: r.material_differs === true,
                materialName: (r.material_name ?? null) as string | null
              })
            )
            : Effect.succeed(JSON.parse(r.json) as Part)
        ),
        mapConstraints
      ),
    list: (tenantId, q: PartListQuery) =>
      Effect.gen(function*() {
        const f = q.filters
        const where = [sql`p.tenant_id = ${tenantId}`, sql.literal(LIVE)]
        if (f.id !== undefined) where.push(sql`p.id = ${f.id}`)
        if (f.job_id !== undefined) where.push(sql`p.job_id = ${f.job_id}`)
        if (f.job_number !== undefined) {
          where.push(sql`EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = p.tenant_id AND j.id = p.job_id AND j.job_number ILIKE ${contains(f.job_number)})`)
        }
        if (f.part_number !== undefined) where.push(sql`p.part_number ILIKE ${contains(f.part_number)}`)
        if (f.material !== undefined) where.push(sql`p.material = ${f.material}`)
        if (f.material_lot !== undefined) where.push(sql`p.material_lot = ${f.material_lot}`)
        if (f.status !== undefined) where.push(sql`p.status = ${f.status}`)
        if (f.parent_part_id !== undefined) where.push(sql`p.parent_part_id = ${f.parent_part_id}`)
        if (f.quantity !== undefined) where.push(sql`p.quantity = ${f.quantity}`)
        if (f.search !== undefined) {
          const s = contains(f.search)
          where.push(sql`(p.part_number ILIKE ${s} OR p.notes ILIKE ${s})`)
        }
        return yield* listPage<Part>(sql, { table: "parts", alias: "p", where, sort: partSort, query: q })
      }).pipe(Effect.orDie),
    read: (tenantId, id) => readOwned<Part>(sql, "parts", tenantId, id, withQuantities("parts")),
    patch: (tenantId, id, changes, refs, parentNumber) =>
      writes.patch(tenantId, id, changes, [moveEvent("part.updated", false)], refs, {}, [parentNumber ?? null]).pipe(
        Effect.map(({ row, ...outcome }) => ({
          ...outcome,
          noParent: row.no_parent === true,
          cycle: row.cycle === true,
          parentId: (row.parent_id ?? null) as string | null,
          materialDiffers: row.material_differs === true,
          materialName: (row.material_name ?? null) as string | null
        })),
        mapConstraints
      ),
    remove: (tenantId, id) => writes.remove(tenantId, id).pipe(mapPartDeleteConstraints),
    sync: (plans) =>
      Effect.gen(function*() {
        const statement = syncStatements(syncPartsKey(plans, catalog), () => syncPartsStatement(plans, catalog))
        const outcomes = yield* sql.unsafe<{
          id: string | null
          action: SyncAction | null
          no_owner: boolean
          elsewhere: boolean
          missing_refs: Array<number>
          differ_parts?: Array<number>
          differ_names?: Array<string>
          no_parent?: boolean
          cycle?: boolean
          parent_self?: boolean
        }>(
          statement,
          [JSON.stringify(plans.map((p) => ({ part: p.part, job_external_id: p.jobExternalId, refs: p.refs, parent: p.parent }))), plans[0]!.part.tenant_id]
        )
        return outcomes.map((r) =>
          r.id !== null
            ? { _tag: "Synced" as const, id: r.id, action: r.action! }
            : {
              _tag: "Refused" as const,
              noJob: r.no_owner,
              elsewhere: r.elsewhere,
              missingRefs: r.missing_refs,
              materialName: materialsDiffer(r)[0]?.name ?? null,
              noParent: r.no_parent === true,
              cycle: r.cycle === true,
              parentSelf: r.parent_self === true
            }
        )
      }).pipe(mapConstraints)
  })
}))
