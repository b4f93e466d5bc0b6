// Operations: standalone create, list, read, update, delete (spec 4.3).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { BadRequest, Conflict, Forbidden, NotFound, ValidationFailed } from "../errors.ts"
import { InvalidStateTransition } from "../errors.ts"
import { renameAliases } from "../fields.ts"
import { actionPlan, type MovePlan, patchPlan, refuseAction, refuseMove, rowEvents, settleMove } from "../lifecycle.ts"
import { readOwned, settlePatch, settleRemove } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkedReferences, ensureOwned, missingReferenceDetails, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, validationFailed } from "../validation.ts"
import { unknownCellName } from "../jobs/nested.ts"
import {
  completeFromAnyState,
  type OperationAction,
  operationMachine,
  OPEN_TIME_ENTRY,
  type OperationState
} from "./lifecycle.ts"
import { Operation, operationAliases, OperationCreate, operationListSpec, OperationPatch, operationPatchAliases } from "./schema.ts"
import { type OperationContext, OperationStore } from "./store.ts"

type Services = CurrentTenant

/** The answer of an operation lifecycle action (spec 4.5). */
export interface OperationTransitioned {
  readonly operation: JsonText<Operation & OperationContext & { readonly estimated_time: number | null }>
  readonly operation_type: OperationAction
  readonly previous_status: OperationState
  readonly new_status: OperationState
  readonly time_entry_ended: boolean
}

export class Operations extends Context.Service<Operations, {
  /** Creates an operation on a part of the tenant; sequence defaults to max+1 (spec 2.3). */
  readonly create: (input: unknown) => Effect.Effect<Operation, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Operation>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<Operation>, NotFound | Forbidden, Services>
  /** PATCH the allowed fields; status `completed` from any state sets completed_at (spec 3.2). */
  readonly update: (
    id: string,
    input: unknown
  ) => Effect.Effect<JsonText<Operation>, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /**
   * A lifecycle action of spec 3.2 as one statement: the guarded move, its time entries (opened for
   * `userId` on start/resume, all ended on pause/complete), actual_time and the part's status.
   * Emits operation.started / paused / resumed / completed and part.started / part.completed.
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
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(OperationCreate, "operation", { record: Operation })
    const decodePatch = decodePatchInput(OperationPatch, "operation")

    const refs = (input: { cell_id?: string | null | undefined; assigned_operator_id?: string | null | undefined }) => {
      const out: Array<Reference> = []
      if (input.cell_id != null) out.push({ table: "cells", id: input.cell_id, path: ["cell_id"] })
      if (input.assigned_operator_id != null) out.push({ table: "profiles", id: input.assigned_operator_id, path: ["assigned_operator_id"] })
      return out
    }


    /** Runs a move plan as one statement and answers it: the moved operation, or 404 / 403 / 409 / 422. */
    const move = (
      id: string,
      plan: MovePlan,
      o: {
        readonly userId: string | undefined
        readonly refs: ReadonlyArray<Reference>
        readonly input: unknown
        readonly refsFirst: boolean
        readonly refusal: (current: string) => InvalidStateTransition
      }
    ) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const outcome = yield* store.move(tenant.id, id, plan, { userId: o.userId, refs: checkedReferences(o.refs) })
        const moved = yield* settleMove({
          table: "operations",
          id,
          plan,
          refusal: o.refusal,
          recheck: store.status(tenant.id, id),
          refs: { list: o.refs, root: "operation", input: o.input, first: o.refsFirst }
        }, outcome)
        return { ...moved, outcome }
      })

    return Operations.of({
      transition: (id, action, userId) =>
        Effect.gen(function*() {
          const t = operationMachine.find((r) => r.action === action)!
          const opens = (t.effects ?? []).includes(OPEN_TIME_ENTRY)
          // spec 7.4: a wrong state (409) is answered before a user of another tenant (422)
          const users: Array<Reference> = opens && userId !== undefined ? [{ table: "profiles", id: userId, path: ["user_id"] }] : []
          const moved = yield* move(id, actionPlan(operationMachine, action, rowEvents), {
            userId: opens ? userId : undefined,
            refs: users,
            input: { user_id: userId },
            refsFirst: false,
            refusal: refuseAction("operation", t)
          })
          return {
            operation: moved.outcome.detail!,
            operation_type: action,
            previous_status: moved.previous as OperationState,
            new_status: t.to,
            time_entry_ended: moved.outcome.timeEntryEnded
          }
        }),
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const body = renameAliases(raw, operationAliases)
          const input = yield* decodeCreate(body)
          const references: Array<Reference> = [{ table: "parts", id: input.part_id, path: ["part_id"] }, ...refs(input)]
          // the references and a cell named without cell_id are checked, and the cell resolved, in the create's statement
          const { cell_name: cellName, ...fields } = input
          const named = input.cell_id == null ? cellName ?? undefined : undefined
          const refused = (indexes: ReadonlyArray<number>, unknownCell: boolean) =>
            validationFailed("operation", [
              ...missingReferenceDetails("operation", body, references, indexes),
              ...(unknownCell ? [unknownCellName("operation", body, named!, ["cell_name"])] : [])
            ])
          return yield* store.insert({ ...fields, id: newId(), tenant_id: tenant.id, cell_id: input.cell_id ?? null }, checkedReferences(references), named).pipe(
            Effect.catchTags({
              MissingReferences: (e) => refused(e.indexes, false),
              UnknownCellName: (e) => refused(e.missingRefs, true)
            })
          )
        }),
      // `paused` is an input alias of on_hold (DECISIONS), in filters too
      list: listWith(operationListSpec, (tenantId, q) =>
        store.list(tenantId, q.filters.status === "paused" ? { ...q, filters: { ...q.filters, status: "on_hold" } } : q)),
      get: (id) => readOwned("operations", id, (tenantId) => store.read(tenantId, id)),
      update: (id, raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const body = renameAliases(raw, operationPatchAliases)
          // spec 7.4: 403 / 404 before 422
          const input = yield* decodePatch(body).pipe(Effect.tapError(() => ensureOwned("operations", id).pipe(withRefs)))
          const { status: rawStatus, ...changes } = input
          const status = rawStatus === "paused" ? "on_hold" : rawStatus
          if (status === undefined) {
            const outcome = yield* store.patch(tenant.id, id, changes, checkedReferences(refs(input)))
            return yield* settlePatch({ table: "operations", id, root: "operation", input: body, refs: refs(input) }, outcome)
          }
          // status changes are lifecycle moves with their effects (spec 3.2); completed from any state
          const plan = status === "completed"
            ? actionPlan([completeFromAnyState], "complete", rowEvents, changes)
            : patchPlan(operationMachine, status, rowEvents, changes)
          const moved = yield* move(id, plan, {
            userId: undefined,
            refs: refs(input),
            input: body,
            refsFirst: true,
            refusal: (current) => refuseMove(operationMachine, "operation", current as OperationState, status)
          })
          return moved.record
        }),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* settleRemove("operations", id, yield* store.remove(tenant.id, id))
        })
    })
  }))
}
