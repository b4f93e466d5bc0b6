// Operations: standalone create, list, read, update, delete (spec 4.3).
import { Context, Effect, Layer } from "effect"
import type { BadRequest, Conflict, Forbidden, ValidationFailed } from "../errors.ts"
import { type InvalidStateTransition, NotFound } from "../errors.ts"
import { renameAliases } from "../fields.ts"
import { refuseMove, transitionTo } from "../lifecycle.ts"
import { findOwned } from "../crud.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { decodeListQuery, type Page, toPage } from "../query.ts"
import { checkReferences, ensureOwned, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, detail, failIfAny, type ValidationDetail } from "../validation.ts"
import { completeFromAnyState, operationMachine, type OperationState } from "./lifecycle.ts"
import { type Operation, operationAliases, OperationCreate, operationListSpec, OperationPatch } from "./schema.ts"
import { OperationStore } from "./store.ts"

type Services = CurrentTenant

/** Resolves `cell_name` to a cell of the tenant when no `cell_id` is given (spec 2.3). */
export const resolveCellName = (root: string, input: unknown, cellName: string | null | undefined, path = ["cell_name"]) =>
  Effect.gen(function*() {
    if (cellName == null) return { cellId: undefined, details: [] as Array<ValidationDetail> }
    const tenant = yield* CurrentTenant
    const cellId = (yield* (yield* References).cellsByName(tenant.id, [cellName])).get(cellName)
    return cellId === undefined
      ? { cellId, details: [detail(root, input, path, "FK_CONSTRAINT", `cell named '${cellName}' does not exist in this tenant`)] }
      : { cellId, details: [] as Array<ValidationDetail> }
  })

export class Operations extends Context.Service<Operations, {
  /** Creates an operation on a part of the tenant; sequence defaults to max+1 (spec 2.3). */
  readonly create: (input: unknown) => Effect.Effect<Operation, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Operation>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<Operation, NotFound | Forbidden, Services>
  /** PATCH the allowed fields; status `completed` from any state sets completed_at (spec 3.2). */
  readonly update: (
    id: string,
    input: unknown
  ) => Effect.Effect<Operation, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /** Refused when the operation has time entries (409). */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/Operations") {
  static readonly layer = Layer.effect(Operations, Effect.gen(function*() {
    const store = yield* OperationStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(OperationCreate, "operation")
    const decodePatch = decodePatchInput(OperationPatch, "operation")

    const refs = (input: { cell_id?: string | null | undefined; assigned_operator_id?: string | null | undefined }) => {
      const out: Array<Reference> = []
      if (input.cell_id != null) out.push({ table: "cells", id: input.cell_id, path: ["cell_id"] })
      if (input.assigned_operator_id != null) out.push({ table: "profiles", id: input.assigned_operator_id, path: ["assigned_operator_id"] })
      return out
    }

    return Operations.of({
      create: (raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const body = renameAliases(raw, operationAliases)
          const input = yield* decodeCreate(body)
          const cell = input.cell_id == null ? yield* resolveCellName("operation", body, input.cell_name) : { cellId: undefined, details: [] }
          const details = yield* checkReferences("operation", body, [
            { table: "parts", id: input.part_id, path: ["part_id"] },
            ...refs(input)
          ])
          yield* failIfAny("operation", [...details, ...cell.details])
          const { cell_name: _c, ...fields } = input
          return yield* store.insert({ ...fields, id: newId(), tenant_id: tenant.id, cell_id: input.cell_id ?? cell.cellId ?? null })
        })),
      list: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const q = yield* decodeListQuery(operationListSpec, raw)
          // `paused` is an input alias of on_hold (DECISIONS), in filters too
          const filters = q.filters.status === "paused" ? { ...q.filters, status: "on_hold" } : q.filters
          return toPage(q)(yield* store.list(tenant.id, { ...q, filters }))
        }),
      get: (id) => withRefs(findOwned("operations", "operation", id, (tenantId) => store.get(tenantId, id))),
      update: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("operations", id)
          const input = yield* decodePatch(raw)
          yield* failIfAny("operation", yield* checkReferences("operation", raw, refs(input)))
          const { status: rawStatus, ...changes } = input
          const status = rawStatus === "paused" ? "on_hold" : rawStatus
          const notFound = new NotFound({ entity: "operation", id })
          if (status === undefined) {
            return (yield* store.update(tenant.id, id, changes)) ?? (yield* Effect.fail(notFound))
          }
          if (status === "completed") {
            return (yield* store.update(tenant.id, id, { ...changes, status }, completeFromAnyState)) ?? (yield* Effect.fail(notFound))
          }
          // other status changes follow the lifecycle table with its timestamps (spec 3.2)
          const current = yield* store.get(tenant.id, id)
          if (current === undefined) return yield* notFound
          const move = transitionTo(operationMachine, current.status as OperationState, status)
          const refuse = (from: OperationState) => Effect.fail(refuseMove(operationMachine, "operation", from, status))
          if (move === undefined) return yield* refuse(current.status as OperationState)
          const updated = yield* store.update(tenant.id, id, { ...changes, status: move.to }, move)
          if (updated !== undefined) return updated
          const now = yield* store.get(tenant.id, id)
          return now === undefined ? yield* notFound : yield* refuse(now.status as OperationState)
        })),
      remove: (id) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("operations", id)
          if (!(yield* store.remove(tenant.id, id))) return yield* new NotFound({ entity: "operation", id })
        }))
    })
  }))
}
