// Time entries by hand (DECISIONS: records): list, read, create, correct and delete; every change
// sets the operation's actual_time again in the same statement.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type BadRequest, Conflict, type Forbidden, NotFound, type ValidationFailed } from "../errors.ts"
import { readOwned } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkedReferences, checkOwner, ensureOwned, missingReferenceDetails, type Reference, referenceDetail } from "../references.ts"
import { decodeInput, decodePatchInput, detail, failIfAny, type ValidationDetail, validationFailed } from "../validation.ts"
import { TimeEntry, TimeEntryCreate, timeEntryListSpec, TimeEntryPatch } from "./schema.ts"
import { type EntryWrite, TimeEntryStore } from "./store.ts"

type Services = CurrentTenant

const ROOT = "time_entry"

/** The detail of an end_time before its start_time (the store compares them, a correction's over the entry's). */
const backwardsDetail = (input: unknown): ValidationDetail =>
  detail(ROOT, input, ["end_time"], "MIN_VALUE", "end_time must not be before start_time")

/**
 * An open entry (no end_time) is refused on an operation that is on hold or completed: no move would end it, and
 * such an operation has no running entry (DECISIONS: time entries). The store checks it after the operation's row
 * lock, in the write's statement, and says so before the references (409 before 422).
 */
const CLOSED_TO_OPEN_ENTRIES = ["on_hold", "completed"]

/**
 * The answer to a write by hand, once its owner passed (404 / 403), in the spec's order (7.4): 409 (an open entry on
 * an operation on hold or completed), then 422 (references, end before start); `gone` when the statement refused
 * nothing and wrote nothing.
 */
const answer = <E>(input: unknown, refs: ReadonlyArray<Reference>, w: EntryWrite, gone: Effect.Effect<never, E>) =>
  Effect.gen(function*() {
    if (w.entry !== undefined) return w.entry
    if (w.opens && w.status !== undefined && CLOSED_TO_OPEN_ENTRIES.includes(w.status)) {
      return yield* new Conflict({ message: `operation ${w.operationId} is ${w.status}: a time entry on it needs an end_time`, field: "end_time" })
    }
    yield* failIfAny(ROOT, [...missingReferenceDetails(ROOT, input, refs, w.missingRefs), ...(w.backwards ? [backwardsDetail(input)] : [])])
    return yield* gone
  })

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
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(TimeEntryCreate, ROOT, { record: TimeEntry })
    const decodePatch = decodePatchInput(TimeEntryPatch, ROOT)
    const userRef = (user: string | null | undefined): Array<Reference> =>
      user == null ? [] : [{ table: "profiles", id: user, path: ["user_id"] }]
    const plan = (refs: ReadonlyArray<Reference>) => ({ refs: checkedReferences(refs), closedTo: CLOSED_TO_OPEN_ENTRIES })

    return TimeEntries.of({
      list: listWith(timeEntryListSpec, store.list),
      get: (id) => readOwned("time_entries", id, (tenantId) => store.read(tenantId, id)),
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeCreate(raw)
          const operation: Reference = { table: "operations", id: input.operation_id, path: ["operation_id"] }
          const refs = [operation, ...userRef(input.user_id)]
          const written = yield* store.create(tenant.id, { ...input, id: newId() }, plan(refs))
          // nothing refused and nothing written: the operation went away before its lock
          return yield* answer(raw, refs, written, validationFailed(ROOT, [referenceDetail(ROOT, raw, operation)]))
        }),
      update: (id, raw) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // 403/404 before 422: an input the schema refuses waits for the owner check
          const patch = yield* decodePatch(raw).pipe(
            Effect.catchTag("ValidationFailed", (e) => Effect.andThen(ensureOwned("time_entries", id), Effect.fail(e)))
          )
          const refs = userRef(patch.user_id)
          const written = yield* store.correct(tenant.id, id, patch, plan(refs))
          yield* checkOwner("time_entries", id, written.owner)
          return yield* answer(raw, refs, written, new NotFound({ entity: "time entry", id }))
        })),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* checkOwner("time_entries", id, yield* store.remove(tenant.id, id))
        })
    })
  }))
}
