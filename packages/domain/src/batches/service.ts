// Batches (spec 2.6, 3.3, 4.6): CRUD and the batch lifecycle. Starting a batch starts its
// operations and opens the operator's time entries; stopping it completes them and shares the
// tracked time across them as distributeBatchTime says; each one statement (BatchStore.transition).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readOwned, settlePatch, settleRemove, takenFirst } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { type BadRequest, Conflict, type Forbidden, InvalidStateTransition, NotFound, type ValidationFailed } from "../errors.ts"
import { actionPlan, type MovePlan, patchPlan, refuseAction, refuseMove, rowEvents, settleMove, type Transition } from "../lifecycle.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkedReferences, checkOwner, ensureOwned, missingReferenceDetails, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, detail, failIfAny, isNameCandidate, validationFailed } from "../validation.ts"
import { duplicates } from "../jobs/nested.ts"
import { addOperationsFrom, type BatchAction, batchMachine } from "./lifecycle.ts"
import { AddOperations, Batch, BatchCreate, batchListSpec, BatchPatch, BatchStart, type BatchStatus, type TimeShare } from "./schema.ts"
import { BatchStore } from "./store.ts"

type Services = CurrentTenant
type Problem = NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition

/** The moves a PATCH `status` makes (DECISIONS): to ready, and to cancelled; to any other status none (409). */
const patchMachine = batchMachine.filter((t) => t.action === "ready" || t.action === "cancel")

export interface BatchTransitioned {
  readonly batch: Batch | JsonText<Batch>
  readonly operation: BatchAction
  readonly previous_status: BatchStatus
  readonly new_status: BatchStatus
  /** Operations whose status this move changed. */
  readonly operations_moved: ReadonlyArray<string>
  readonly time_entries_opened?: number
  /** How the tracked time was shared (stop). */
  readonly time_distribution?: ReadonlyArray<TimeShare>
}

export class Batches extends Context.Service<Batches, {
  readonly create: (input: unknown) => Effect.Effect<Batch, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Batch>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<Batch>, NotFound | Forbidden, Services>
  /**
   * Field updates; `status` moves draft → ready (or cancels a batch not yet started). The record as the store answered
   * it: JSON text from a PATCH of fields alone, one statement.
   */
  readonly update: (id: string, input: unknown) => Effect.Effect<Batch | JsonText<Batch>, Problem, Services>
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
  /** start | stop (spec 3.3); emits batch.started / batch.completed and the operations' and parts' events. */
  readonly transition: (id: string, action: "start" | "stop", body: unknown) => Effect.Effect<BatchTransitioned, Problem, Services>
  /** Appends operations while the batch is draft or ready (spec 3.3). */
  readonly addOperations: (id: string, body: unknown) => Effect.Effect<Batch, Problem, Services>
}>()("mes/domain/Batches") {
  static readonly layer = Layer.effect(Batches, Effect.gen(function*() {
    const store = yield* BatchStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(BatchCreate, "batch", { record: Batch })
    const decodePatch = decodePatchInput(BatchPatch, "batch")
    const decodeStart = decodeInput(BatchStart, "batch")
    const decodeAdd = decodeInput(AddOperations, "batch")

    const fieldRefs = (input: { cell_id?: string | null | undefined; parent_batch_id?: string | null | undefined }): Array<Reference> => [
      ...(input.cell_id != null ? [{ table: "cells" as const, id: input.cell_id, path: ["cell_id"] }] : []),
      ...(input.parent_batch_id != null ? [{ table: "batches" as const, id: input.parent_batch_id, path: ["parent_batch_id"] }] : [])
    ]

    const numberTaken = (n: string) => `batch_number ${n} already exists`
    /** spec 7.4: a taken batch_number is 409 even when other fields are invalid (on PATCH, the batch's own is not taken). */
    const numberFirst = (tenantId: string, raw: unknown, exceptId?: string) => {
      const n = (raw as { batch_number?: unknown } | null)?.batch_number
      return takenFirst({
        field: "batch_number",
        value: isNameCandidate(n) ? n : undefined,
        taken: (v) => store.numberTaken(tenantId, v, exceptId),
        message: numberTaken
      })
    }

    const refuseTaken = (operationIds: ReadonlyArray<string>, where = "another batch") =>
      operationIds.length === 0
        ? Effect.void
        : Effect.fail(new Conflict({ message: `operations already in ${where}: ${operationIds.join(", ")}`, field: "operation_ids" }))

    const circular = (input: unknown) => detail("batch", input, ["parent_batch_id"], "CIRCULAR_REFERENCE", "a batch cannot be its own ancestor")
    /** A PATCH whose new parent's chain holds the batch (its statement wrote nothing): 422 after 404 / 403, with the references' details. */
    const refuseCycle = (id: string, input: unknown, refs: ReadonlyArray<Reference>, outcome: { readonly owner?: string | undefined; readonly missingRefs: ReadonlyArray<number> }) =>
      Effect.gen(function*() {
        yield* checkOwner("batches", id, outcome.owner)
        return yield* validationFailed("batch", [...missingReferenceDetails("batch", input, refs, outcome.missingRefs), circular(input)])
      })

    /**
     * A batch move as one statement (BatchStore.transition), answered by settleMove: 404 / 403, then a wrong state
     * (409), then the references (422), or the references first with `refsFirst` (a PATCH checks its fields first).
     * An `action`, or a PATCH's `status` (`patchTo`: a move of patchMachine, none for other statuses).
     */
    const move = (
      id: string,
      action: BatchAction | { readonly patchTo: BatchStatus },
      o: { readonly changes: Readonly<Record<string, unknown>>; readonly refs: ReadonlyArray<Reference>; readonly input: unknown; readonly operatorId: string | null; readonly refsFirst: boolean }
    ) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const events = (r: Transition<BatchStatus, BatchAction>) => (r.event === undefined ? [] : rowEvents(r))
        let plan: MovePlan
        let refusal: ReturnType<typeof refuseAction>
        if (typeof action === "string") {
          plan = actionPlan(batchMachine, action, events, o.changes)
          refusal = refuseAction("batch", batchMachine.find((r) => r.action === action)!)
        } else {
          const to = action.patchTo
          plan = patchPlan(patchMachine, to, events, o.changes)
          refusal = (current) => refuseMove(patchMachine, "batch", current as BatchStatus, to)
        }
        const outcome = yield* store.transition(tenant.id, id, plan, { operatorId: o.operatorId, refs: checkedReferences(o.refs) })
        if (outcome.cycle) yield* refuseCycle(id, o.input, o.refs, outcome)
        const moved = yield* settleMove({
          table: "batches",
          id,
          plan,
          refusal,
          recheck: store.status(tenant.id, id),
          refs: { list: o.refs, root: "batch", input: o.input, first: o.refsFirst }
        }, outcome)
        return { outcome, record: moved.record, previous: moved.previous as BatchStatus, to: plan.to as BatchStatus }
      })

    /**
     * Batch start and stop. Start records its operator on the batch and opens its time entries; stop only checks the
     * operator it names, and shares the tracked time.
     */
    const transition = (id: string, action: "start" | "stop", raw: unknown) =>
      Effect.gen(function*() {
        // spec 7.4: 404 / 403 before 422, looked up only when the body is refused
        const { operator_id } = yield* decodeStart(raw ?? {}).pipe(Effect.tapError(() => ensureOwned("batches", id)))
        const refs: Array<Reference> = operator_id != null ? [{ table: "profiles", id: operator_id, path: ["operator_id"] }] : []
        const changes = action === "start" && operator_id != null ? { operator_id } : {}
        const { outcome, record, previous, to } = yield* move(id, action, { changes, refs, input: raw, operatorId: operator_id ?? null, refsFirst: false })
        return {
          batch: record,
          operation: action,
          previous_status: previous,
          new_status: to,
          operations_moved: outcome.operationsMoved,
          ...(action === "start" ? { time_entries_opened: outcome.timeEntriesOpened } : { time_distribution: outcome.shares })
        } satisfies BatchTransitioned
      })

    return Batches.of({
      create: (raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeCreate(raw).pipe(Effect.catchTag("ValidationFailed", numberFirst(tenant.id, raw)))
          const ids = input.operation_ids ?? []
          const refs: Array<Reference> = [...ids.map((id, i) => ({ table: "operations" as const, id, path: ["operation_ids", i] })), ...fieldRefs(input)]
          // a repeated operation is refused with the rest: the statement then only reports what it found
          const repeated = duplicates("batch", raw, ids, (id) => id, (i) => ["operation_ids", i], "operation")
          const { operation_ids: _o, ...fields } = input
          const outcome = yield* store.insert({ ...fields, id: newId(), tenant_id: tenant.id }, ids, checkedReferences(refs), repeated.length > 0)
          // spec 7.4: 409 for the number before 422, then an operation in another batch
          if (outcome.numberTaken) return yield* new Conflict({ message: numberTaken(input.batch_number), field: "batch_number" })
          yield* failIfAny("batch", [...repeated, ...missingReferenceDetails("batch", raw, refs, outcome.missingRefs)])
          yield* refuseTaken(outcome.held)
          return outcome.batch!
        })),
      list: listWith(batchListSpec, store.list),
      get: (id) => readOwned("batches", id, (tenantId) => store.read(tenantId, id)),
      update: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // spec 7.4: 404 / 403, then a taken batch_number's 409, before 422; looked up only when the body is refused
          const patch = yield* decodePatch(raw).pipe(
            Effect.tapError(() => ensureOwned("batches", id)),
            Effect.catchTag("ValidationFailed", numberFirst(tenant.id, raw, id))
          )
          const { status, ...changes } = patch
          const refs = fieldRefs(patch)
          if (status === undefined) {
            // fields: one statement, the references and a new parent's chain checked in it
            const outcome = yield* store.patch(tenant.id, id, changes, checkedReferences(refs))
            if (outcome.cycle) return yield* refuseCycle(id, raw, refs, outcome)
            return yield* settlePatch({ table: "batches", id, root: "batch", input: raw, refs }, outcome)
          }
          // a move with the fields: one statement (a new parent's chain checked in it), the references answered
          // before the state; a status no PATCH moves to (DECISIONS: only ready and cancelled) moves nothing, so 409
          const moved = yield* move(id, { patchTo: status }, { changes, refs, input: raw, operatorId: null, refsFirst: true })
          return moved.record
        })),
      remove: (id) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* settleRemove("batches", id, yield* store.remove(tenant.id, id))
        })),
      transition: (id, action, raw) => withRefs(transition(id, action, raw)),
      addOperations: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // spec 7.4: 404 / 403 before 422, looked up only when the body is refused
          const { operation_ids } = yield* decodeAdd(raw).pipe(Effect.tapError(() => ensureOwned("batches", id)))
          const refs = operation_ids.map((op, i): Reference => ({ table: "operations", id: op, path: ["operation_ids", i] }))
          // a repeated operation is refused with the rest: the statement then only reports what it found
          const repeated = duplicates("batch", raw, operation_ids, (op) => op, (i) => ["operation_ids", i], "operation")
          const outcome = yield* store.addOperations(tenant.id, id, {
            operationIds: operation_ids,
            whileIn: addOperationsFrom,
            refs: checkedReferences(refs),
            dryRun: repeated.length > 0
          })
          yield* checkOwner("batches", id, outcome.owner)
          if (outcome.batch !== undefined) return outcome.batch
          const refuse = (current: BatchStatus) =>
            new InvalidStateTransition({ entity: "batch", current, required: addOperationsFrom, action: "add operations to" })
          let current = outcome.current
          if (current !== undefined && addOperationsFrom.includes(current)) {
            // spec 7.4: the state (409), then the operations (422), then those in another batch, then those in this
            // one already (409, in the request's order); with none of them, the status changed under the statement
            yield* failIfAny("batch", [...repeated, ...missingReferenceDetails("batch", raw, refs, outcome.missingRefs)])
            yield* refuseTaken(outcome.held)
            yield* refuseTaken(operation_ids.filter((op) => outcome.heldHere.includes(op)), "this batch")
            current = yield* store.status(tenant.id, id)
          }
          return yield* (current === undefined ? Effect.fail(new NotFound({ entity: "batch", id })) : Effect.fail(refuse(current)))
        }))
    })
  }))
}
