// Rules for parts and operations created inside a job (spec 2.2, 2.3, 7.3): unique part numbers,
// sequences unique and consecutive, parent parts inside the job without cycles, cells by id or name.
import { materialRef } from "../materials/service.ts"
import * as Effect from "effect/Effect"
import type { OperationNested } from "../operations/schema.ts"
import type { Operation } from "../operations/schema.ts"
import type { Part } from "../parts/schema.ts"
import type { PartNested } from "./schema.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import type { Reference } from "../references.ts"
import { detail, type Path, type ValidationDetail } from "../validation.ts"
import type { NewRow } from "./store.ts"

type PartLike = Omit<PartNested, "operations"> & { readonly operations?: ReadonlyArray<OperationNested> | undefined }

/** An operation row; `cell_name` is resolved to `cell_id` in the tenant by the store's statement. */
export type NestedOperation = NewRow<Operation> & { readonly cell_name?: string | null }

export interface NestedPlan {
  readonly parts: Array<NewRow<Part>>
  readonly operations: Array<NestedOperation>
  readonly details: Array<ValidationDetail>
  readonly refs: Array<Reference>
  /** Cells named by `cell_name` (without `cell_id`), with where each was named. */
  readonly cellNames: Array<{ readonly name: string; readonly path: Path }>
}

/** Duplicate values among items: a detail for every repeat after the first. */
export const duplicates = <T>(
  root: string,
  input: unknown,
  items: ReadonlyArray<T>,
  key: (t: T) => unknown,
  path: (i: number) => Path,
  what: string
): Array<ValidationDetail> => {
  const seen = new Set<unknown>()
  const out: Array<ValidationDetail> = []
  items.forEach((item, i) => {
    const k = key(item)
    if (k === undefined || k === null) return
    if (seen.has(k)) out.push(detail(root, input, path(i), "UNIQUE_CONSTRAINT", `${what} ${String(k)} appears more than once`))
    seen.add(k)
  })
  return out
}

/** Sequences must be unique and consecutive 1..n within a part (spec 2.2). */
const sequenceRules = (root: string, input: unknown, ops: ReadonlyArray<OperationNested>, base: Path) => {
  const out = duplicates(root, input, ops, (o) => o.sequence, (i) => [...base, i, "sequence"], "sequence")
  if (out.length > 0) return out
  ops.forEach((o, i) => {
    if (o.sequence > ops.length) {
      out.push(detail(root, input, [...base, i, "sequence"], "MAX_VALUE",
        `sequence numbers must be consecutive from 1; ${o.sequence} exceeds the part's ${ops.length} operation(s)`))
    }
  })
  return out
}

/** Input fields that are not columns of the row: a part's operations and parent by number, an operation's cell by name. */
const PART_INPUT_ONLY = ["operations", "parent_part_number", "parent_part_id"]
const OPERATION_INPUT_ONLY = ["cell_name"]

/**
 * The own fields of `o` but `skip`, then `extra`, in a new object: a plain loop, since a rest-and-spread copy
 * (`const { skip, ...fields } = o; { ...fields }`) costs ≈ 15 times as much (a bulk of 1,000 jobs has 26,000 rows).
 */
const fieldsOf = (o: object, skip: ReadonlyArray<string>, extra: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const row: Record<string, unknown> = {}
  for (const k in o) if (Object.hasOwn(o, k) && !skip.includes(k)) row[k] = (o as Record<string, unknown>)[k]
  for (const k in extra) row[k] = extra[k]
  return row
}

/** One job create or sync writes at most this many parts, and this many operations in all (DECISIONS). */
export const MAX_NESTED_PARTS = 1000
export const MAX_NESTED_OPERATIONS = 10_000

const nestedSizeDetails = (root: string, input: unknown, parts: ReadonlyArray<PartLike>, base: Path): Array<ValidationDetail> => {
  const operations = parts.reduce((n, p) => n + (p.operations?.length ?? 0), 0)
  return [
    ...(parts.length > MAX_NESTED_PARTS
      ? [detail(root, input, base, "MAX_LENGTH", `at most ${MAX_NESTED_PARTS} parts per job, got ${parts.length}`, parts.length)]
      : []),
    ...(operations > MAX_NESTED_OPERATIONS
      ? [detail(root, input, base, "MAX_LENGTH", `at most ${MAX_NESTED_OPERATIONS} operations per job in all, got ${operations}`, operations)]
      : [])
  ]
}

/**
 * Builds the rows of parts and operations for job `jobId` and collects every rule violation that
 * needs no database. References (ids, and cells by name) are left for the store's statement.
 */
export const planNested = (
  root: string,
  input: unknown,
  jobId: string,
  parts: ReadonlyArray<PartLike>,
  base: Path = ["parts"],
  existingIds?: ReadonlyArray<string>,
  /** Further columns of every part and operation row (a sync's external_source). */
  extra: Readonly<Record<string, unknown>> = {}
) =>
  Effect.gen(function*() {
    const tenant = yield* CurrentTenant
    const details: Array<ValidationDetail> = []
    const refs: Array<Reference> = []
    details.push(...duplicates(root, input, parts, (p) => p.part_number, (i) => [...base, i, "part_number"], "part_number"))
    details.push(...nestedSizeDetails(root, input, parts, base))

    const ids = parts.map((_, i) => existingIds?.[i] ?? newId())
    const byNumber = new Map(parts.map((p, i) => [p.part_number, ids[i]!]))
    const parentOf = new Map<string, string>()
    parts.forEach((p, i) => {
      const path = [...base, i]
      if (p.parent_part_number != null) {
        const parent = byNumber.get(p.parent_part_number)
        if (parent === undefined) {
          details.push(detail(root, input, [...path, "parent_part_number"], "FK_CONSTRAINT",
            `parent part ${p.parent_part_number} is not a part of this job`))
        } else if (parent === ids[i]) {
          details.push(detail(root, input, [...path, "parent_part_number"], "CIRCULAR_REFERENCE", "a part cannot be its own parent"))
        } else parentOf.set(ids[i]!, parent)
      } else if (p.parent_part_id != null) {
        details.push(detail(root, input, [...path, "parent_part_id"], "FK_CONSTRAINT",
          `part ${p.parent_part_id} is not a part of this job; reference parents in a job create by parent_part_number`))
      }
      if (p.current_cell_id != null) refs.push({ table: "cells", id: p.current_cell_id, path: [...path, "current_cell_id"] })
      refs.push(...materialRef(p.material_id, path))
    })
    // cycles through several parts (A -> B -> A)
    parts.forEach((p, i) => {
      const seen = new Set<string>([ids[i]!])
      let cur = parentOf.get(ids[i]!)
      while (cur !== undefined) {
        if (seen.has(cur)) {
          details.push(detail(root, input, [...base, i, "parent_part_number"], "CIRCULAR_REFERENCE",
            `parent chain of part ${p.part_number} loops back on itself`))
          break
        }
        seen.add(cur)
        cur = parentOf.get(cur)
      }
    })


    const partRows = parts.map((p, i) => {
      const row = fieldsOf(p, PART_INPUT_ONLY, extra)
      row.id = ids[i]!
      row.tenant_id = tenant.id
      row.job_id = jobId
      row.parent_part_id = parentOf.get(ids[i]!) ?? null
      return row as NewRow<Part>
    })
    const operationRows: Array<NestedOperation> = []
    const cellNames: Array<{ name: string; path: Path }> = []
    parts.forEach((p, i) => {
      const ops = p.operations ?? []
      const opsPath = [...base, i, "operations"]
      details.push(...sequenceRules(root, input, ops, opsPath))
      ops.forEach((o, j) => {
        const cell_name = o.cell_name
        const cellId = o.cell_id ?? null
        if (cellId !== null) refs.push({ table: "cells", id: cellId, path: [...opsPath, j, "cell_id"] })
        else if (cell_name != null) cellNames.push({ name: cell_name, path: [...opsPath, j, "cell_name"] })
        if (o.assigned_operator_id != null) {
          refs.push({ table: "profiles", id: o.assigned_operator_id, path: [...opsPath, j, "assigned_operator_id"] })
        }
        const row = fieldsOf(o, OPERATION_INPUT_ONLY, extra)
        row.id = (o as { id?: string }).id ?? newId()
        row.tenant_id = tenant.id
        row.part_id = ids[i]!
        row.cell_id = cellId
        if (cellId === null && cell_name != null) row.cell_name = cell_name
        operationRows.push(row as NestedOperation)
      })
    })
    return { parts: partRows, operations: operationRows, details, refs, cellNames } satisfies NestedPlan
  })

/** The detail for a `cell_name` that names no cell of the tenant. */
export const unknownCellName = (root: string, input: unknown, name: string, path: Path): ValidationDetail =>
  detail(root, input, path, "FK_CONSTRAINT", `cell named '${name}' does not exist in this tenant`)

/** The distinct names of the plan's `cellNames`: what a store's statement resolves in the tenant. */
export const distinctCellNames = (plan: NestedPlan): Array<string> => [...new Set(plan.cellNames.map((c) => c.name))]

/** A detail for every place the plan names one of the `missing` cell names. */
export const unknownCellNames = (root: string, input: unknown, plan: NestedPlan, missing: ReadonlyArray<string>): Array<ValidationDetail> => {
  const names = new Set(missing)
  return plan.cellNames.filter((c) => names.has(c.name)).map((c) => unknownCellName(root, input, c.name, c.path))
}

/** The details of the plan's cell names that name no cell of the tenant, with a query of their own (an error path). */
export const checkCellNames = (root: string, input: unknown, plan: NestedPlan) =>
  Effect.gen(function*() {
    if (plan.cellNames.length === 0) return []
    const tenant = yield* CurrentTenant
    const names = distinctCellNames(plan)
    const cells = yield* (yield* References).cellsByName(tenant.id, names)
    return unknownCellNames(root, input, plan, names.filter((n) => !cells.has(n)))
  })
