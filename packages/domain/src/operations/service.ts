// Operations: standalone create, list, read, update, delete (spec 4.3).
import { emitter, operationEvent, Outbox, rollUpEvents } from "../events.ts"
import { Context, Effect, Layer } from "effect"
import type { BadRequest, Conflict, Forbidden, ValidationFailed } from "../errors.ts"
import { type InvalidStateTransition, NotFound } from "../errors.ts"
import { renameAliases } from "../fields.ts"
import { runAction, runPatchTo, type Transition } from "../lifecycle.ts"
import { PartStore } from "../parts/store.ts"
import { TimeEntryStore } from "../time-entries/store.ts"
import { readOwned } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, References, Tx } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkReferences, ensureOwned, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, detail, failIfAny, type ValidationDetail } from "../validation.ts"
import {
  CLOSE_TIME_ENTRIES,
  completeFromAnyState,
  type OperationAction,
  operationMachine,
  OPEN_TIME_ENTRY,
  type OperationState
} from "./lifecycle.ts"
import { type Operation, operationAliases, OperationCreate, operationListSpec, OperationPatch } from "./schema.ts"
import { type OperationContext, OperationStore } from "./store.ts"

type Services = CurrentTenant

/** The answer of an operation lifecycle action (spec 4.5). */
export interface OperationTransitioned {
  readonly operation: Operation & OperationContext & { readonly estimated_time: number | null }
  readonly operation_type: OperationAction
  readonly previous_status: OperationState
  readonly new_status: OperationState
  readonly time_entry_ended: boolean
}

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
  readonly get: (id: string) => Effect.Effect<JsonText<Operation>, NotFound | Forbidden, Services>
  /** PATCH the allowed fields; status `completed` from any state sets completed_at (spec 3.2). */
  readonly update: (
    id: string,
    input: unknown
  ) => Effect.Effect<Operation, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /**
   * A lifecycle action of spec 3.2 as one guarded statement, with its time entries (opened for
   * `userId` on start/resume, all ended on pause/complete), actual_time and the part's status, in one
   * transaction. Emits operation.started / paused / resumed / completed and part.started / part.completed.
   */
  readonly transition: (
    id: string,
    action: OperationAction,
    userId?: string
  ) => Effect.Effect<OperationTransitioned, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /** Refused when the operation has time entries (409). */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/Operations") {
  static readonly layer = Layer.effect(Operations, Effect.gen(function*() {
    const store = yield* OperationStore
    const parts = yield* PartStore
    const timeEntries = yield* TimeEntryStore
    const tx = yield* Tx
    const emit = emitter(yield* Outbox)
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

    /**
     * Moves one operation and applies the row's effects; every caller runs it in a transaction.
     * `userId` is checked after the move, so a wrong state (409) wins over a bad user (422).
     */
    const applyMove = (
      tenantId: string,
      id: string,
      run: (mover: {
        machine: typeof operationMachine
        entity: string
        id: string
        move: (t: Transition<OperationState, OperationAction>) => ReturnType<typeof store.move>
        status: () => ReturnType<typeof store.status>
      }) => Effect.Effect<{ row: Operation; previous: string; transition: Transition<OperationState, OperationAction> }, NotFound | InvalidStateTransition | Conflict>,
      options: { readonly userId?: string | undefined; readonly changes?: Readonly<Record<string, unknown>> } = {}
    ) =>
      Effect.gen(function*() {
        const moved = yield* run({
          machine: operationMachine,
          entity: "operation",
          id,
          move: (t) => store.move(tenantId, id, t, options.changes),
          status: () => store.status(tenantId, id)
        })
        const effects = moved.transition.effects ?? []
        let row = moved.row
        let ended = 0
        if (effects.includes(OPEN_TIME_ENTRY) && options.userId !== undefined) {
          yield* failIfAny("operation", yield* checkReferences("operation", { user_id: options.userId }, [
            { table: "profiles", id: options.userId, path: ["user_id"] }
          ]))
          yield* timeEntries.open(tenantId, [{ operation_id: id, user_id: options.userId }])
        }
        if (effects.includes(CLOSE_TIME_ENTRIES)) {
          ended = yield* timeEntries.closeActive(tenantId, [id])
          if (ended > 0) row = (yield* timeEntries.recomputeActualTime(tenantId, [id]))[0] ?? row
        }
        const rolled = yield* parts.rollUp(tenantId, [row.part_id])
        yield* emit([
          operationEvent(moved.transition.event!, row, { previous_status: moved.previous, new_status: row.status }, {
            time_entry_ended: ended > 0
          }),
          ...rollUpEvents(rolled)
        ])
        return { row, previous: moved.previous as OperationState, ended }
      })

    return Operations.of({
      transition: (id, action, userId) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("operations", id)
          const { row, previous, ended } = yield* tx.transaction(
            applyMove(tenant.id, id, (mover) => runAction({ ...mover, action }), { userId })
          )
          const context = yield* store.context(tenant.id, id)
          return {
            operation: { ...row, ...context, estimated_time: row.estimated_time_minutes },
            operation_type: action,
            previous_status: previous,
            new_status: row.status,
            time_entry_ended: ended > 0
          }
        })),
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
      // `paused` is an input alias of on_hold (DECISIONS), in filters too
      list: listWith(operationListSpec, (tenantId, q) =>
        store.list(tenantId, q.filters.status === "paused" ? { ...q, filters: { ...q.filters, status: "on_hold" } } : q)),
      get: (id) => readOwned("operations", id, (tenantId) => store.read(tenantId, id)),
      update: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("operations", id)
          const input = yield* decodePatch(raw)
          yield* failIfAny("operation", yield* checkReferences("operation", raw, refs(input)))
          const { status: rawStatus, ...changes } = input
          const status = rawStatus === "paused" ? "on_hold" : rawStatus
          if (status === undefined) {
            return (yield* store.update(tenant.id, id, changes)) ?? (yield* new NotFound({ entity: "operation", id }))
          }
          // status changes are lifecycle moves with their effects (spec 3.2); completed from any state
          const { row } = yield* tx.transaction(applyMove(tenant.id, id, (mover) =>
            status === "completed"
              ? runAction({ ...mover, machine: [completeFromAnyState], action: "complete" })
              : runPatchTo({ ...mover, target: status }), { changes }))
          return row
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
