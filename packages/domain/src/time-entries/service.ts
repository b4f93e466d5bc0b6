// Time entries by hand (DECISIONS: records): list, read, create, correct and delete; every change
// recomputes the operation's actual_time in the same transaction.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type BadRequest, Conflict, type Forbidden, NotFound, type ValidationFailed } from "../errors.ts"
import { findOwned, readOwned } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, References, Tx } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { OperationStore } from "../operations/store.ts"
import { checkReferences, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, detail, failIfAny, type ValidationDetail } from "../validation.ts"
import { TimeEntry, TimeEntryCreate, timeEntryListSpec, TimeEntryPatch } from "./schema.ts"
import { TimeEntryStore } from "./store.ts"

type Services = CurrentTenant

// stored times come back from the driver as Date, input times as ISO strings
const endBeforeStart = (input: unknown, start: string | Date, end: string | Date | null | undefined): Array<ValidationDetail> =>
  end != null && new Date(end).getTime() < new Date(start).getTime()
    ? [detail("time_entry", input, ["end_time"], "MIN_VALUE", "end_time must not be before start_time")]
    : []

/**
 * An open entry (no end_time) is refused on an operation that is on hold or completed: no move would end it, and
 * such an operation has no running entry (DECISIONS: time entries). Checked before the references (409 before 422)
 * and again after the operation's row lock, in the transaction.
 */
const refuseOpenOn = (operationId: string, status: string | undefined) =>
  status === "on_hold" || status === "completed"
    ? Effect.fail(new Conflict({ message: `operation ${operationId} is ${status}: a time entry on it needs an end_time`, field: "end_time" }))
    : Effect.void

export class TimeEntries extends Context.Service<TimeEntries, {
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<TimeEntry>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<TimeEntry>, NotFound | Forbidden, Services>
  /** A manual entry: operator and operation in the tenant, end not before start. */
  readonly create: (input: unknown) => Effect.Effect<TimeEntry, Conflict | ValidationFailed, Services>
  readonly update: (id: string, input: unknown) => Effect.Effect<TimeEntry, NotFound | Forbidden | Conflict | ValidationFailed, Services>
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/TimeEntries") {
  static readonly layer = Layer.effect(TimeEntries, Effect.gen(function*() {
    const store = yield* TimeEntryStore
    const operations = yield* OperationStore
    const references = yield* References
    const tx = yield* Tx
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(TimeEntryCreate, "time_entry", { record: TimeEntry })
    const decodePatch = decodePatchInput(TimeEntryPatch, "time_entry")
    const userRef = (user: string | null | undefined): Array<Reference> =>
      user == null ? [] : [{ table: "profiles", id: user, path: ["user_id"] }]
    /** actual_time again after a change; with `opened` (the change left an entry open) the rule above, after the lock. */
    const recompute = (tenantId: string, operationId: string, opened: boolean) =>
      store.recomputeActualTime(tenantId, [operationId]).pipe(
        Effect.flatMap(([operation]) => opened ? refuseOpenOn(operationId, operation?.status) : Effect.void)
      )
    const checkOpen = (tenantId: string, operationId: string, opened: boolean) =>
      opened ? Effect.flatMap(operations.status(tenantId, operationId), (status) => refuseOpenOn(operationId, status)) : Effect.void

    return TimeEntries.of({
      list: listWith(timeEntryListSpec, store.list),
      get: (id) => readOwned("time_entries", id, (tenantId) => store.read(tenantId, id)),
      create: (raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeCreate(raw)
          const opens = input.end_time == null
          yield* checkOpen(tenant.id, input.operation_id, opens)
          const refs = yield* checkReferences("time_entry", raw, [{ table: "operations", id: input.operation_id, path: ["operation_id"] }, ...userRef(input.user_id)])
          yield* failIfAny("time_entry", [...refs, ...endBeforeStart(raw, input.start_time, input.end_time)])
          return yield* tx.transaction(Effect.gen(function*() {
            const entry = yield* store.insert({ ...input, id: newId(), tenant_id: tenant.id })
            yield* recompute(tenant.id, entry.operation_id, opens)
            return entry
          }))
        })),
      update: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // 403/404 before 422: the owner check (and the current times) come first
          const current = yield* findOwned("time_entries", "time entry", id, (tenantId) => store.get(tenantId, id))
          const patch = yield* decodePatch(raw)
          const start = patch.start_time ?? current.start_time
          const end = patch.end_time === undefined ? current.end_time : patch.end_time
          yield* checkOpen(tenant.id, current.operation_id, end == null && current.end_time != null)
          const refs = yield* checkReferences("time_entry", raw, userRef(patch.user_id))
          yield* failIfAny("time_entry", [...refs, ...endBeforeStart(raw, start, end)])
          return yield* tx.transaction(Effect.gen(function*() {
            // the operation before its entry, in the order a move takes them (else a pause at once could deadlock)
            yield* tx.lockRows("operations", [current.operation_id])
            const entry = yield* store.update(tenant.id, id, patch)
            if (entry === undefined) return yield* new NotFound({ entity: "time entry", id })
            yield* recompute(tenant.id, entry.operation_id, entry.end_time == null && current.end_time != null)
            return entry
          }))
        })),
      remove: (id) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const current = yield* findOwned("time_entries", "time entry", id, (tenantId) => store.get(tenantId, id))
          yield* tx.transaction(Effect.gen(function*() {
            yield* tx.lockRows("operations", [current.operation_id])
            yield* store.remove(tenant.id, id)
            yield* recompute(tenant.id, current.operation_id, false)
          }))
        }))
    })
  }))
}
