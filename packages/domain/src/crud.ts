// The shape shared by plain resources (cells, profiles): create, list, read, update, delete with the
// tenant rules, and the read-one rule (404 / 403) every resource uses.
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import { Conflict, type BadRequest, Forbidden, NotFound, type ValidationFailed } from "./errors.ts"
import { type EventPlan, eventPlan, type EventType } from "./events.ts"
import type { CheckedReference, NewRow } from "./jobs/store.ts"
import { CurrentTenant, newId, References, type ReferenceTable } from "./ports.ts"
import { type FilterKind, isUuid, type ListQuery, type ListSpec, listWith, type Page, type Slice } from "./query.ts"
import type { JsonText } from "./json.ts"
import { checkedReferences, checkOwner, ensureOwned, label, missingReferenceDetails, type Reference } from "./references.ts"
import { decodeInput, decodePatchInput, validationFailed, isNameCandidate } from "./validation.ts"

/** A record looked up by id in one query: who owns it, and its JSON when that is the caller's tenant. */
export interface Owned<A> {
  readonly owner: string | undefined
  readonly record: JsonText<A> | undefined
}

/** Reads a record for the API in one query: 404 when no tenant has it, 403 when another does (spec 5.6, 7.4). */
export const readOwned = <A>(
  table: ReferenceTable,
  id: string,
  read: (tenantId: string) => Effect.Effect<Owned<A>>
): Effect.Effect<JsonText<A>, NotFound | Forbidden, CurrentTenant> =>
  Effect.gen(function*() {
    const tenant = yield* CurrentTenant
    const { owner, record } = yield* read(tenant.id)
    yield* checkOwner(table, id, owner)
    if (record === undefined) return yield* new Forbidden({ message: `${label[table]} ${id} belongs to another tenant` })
    return record
  })

/** What a one-statement PATCH found: the owner of the id, the updated record, the references it lacked. */
export interface PatchOutcome<A> {
  readonly owner: string | undefined
  /** The record after the change; undefined when nothing was changed. */
  readonly record: JsonText<A> | undefined
  /** Indexes of the checked references that are not the tenant's (nothing is changed then). */
  readonly missingRefs: ReadonlyArray<number>
  /** The value, before the write, of the column the store reports for the record's rules (its status, an issue's type). */
  readonly current?: string | undefined
}

/** The answer to a one-statement PATCH: the record, or 404 / 403 / 422 (in spec 7.4 order). */
export const settlePatch = <A>(
  o: { readonly table: ReferenceTable; readonly id: string; readonly root: string; readonly input: unknown; readonly refs: ReadonlyArray<Reference> },
  outcome: PatchOutcome<A>
): Effect.Effect<JsonText<A>, NotFound | Forbidden | ValidationFailed, CurrentTenant> =>
  Effect.gen(function*() {
    yield* checkOwner(o.table, o.id, outcome.owner)
    if (outcome.missingRefs.length > 0) {
      return yield* validationFailed(o.root, missingReferenceDetails(o.root, o.input, o.refs, outcome.missingRefs))
    }
    if (outcome.record === undefined) return yield* new NotFound({ entity: label[o.table], id: o.id })
    return outcome.record
  })

/** A PATCH as one statement: the owner of the id, the references checked in it, the update (and its events). */
export type PatchStatement<T> = (
  tenantId: string,
  id: string,
  changes: Readonly<Record<string, unknown>>,
  refs: ReadonlyArray<CheckedReference>,
  /** Events about the updated record, built from it in the statement (a store may write them only on a change it knows). */
  events?: ReadonlyArray<EventPlan>
) => Effect.Effect<PatchOutcome<T>, Conflict | ValidationFailed>

/** What a create writes in its statement beside the row: the references it checks first, the events about the new record. */
export interface CreatePlan {
  readonly refs: ReadonlyArray<CheckedReference>
  readonly events: ReadonlyArray<EventPlan>
}

/** A create's references that are not the tenant's (indexes into its plan's `refs`): nothing was written. */
export class MissingReferences extends Data.TaggedError("MissingReferences")<{ readonly indexes: ReadonlyArray<number> }> {}

/** What a one-statement delete found: the owner of the id and whether a row of the caller's went. */
export interface RemoveOutcome {
  readonly owner: string | undefined
  readonly removed: boolean
}

/** The answer to a one-statement delete: nothing, or 404 / 403. */
export const settleRemove = (table: ReferenceTable, id: string, outcome: RemoveOutcome) =>
  Effect.gen(function*() {
    if (outcome.removed) return
    yield* checkOwner(table, id, outcome.owner)
    return yield* new NotFound({ entity: label[table], id })
  })

/** A record of the caller's tenant as a row, for rules that need its values: 404 when no tenant has it, 403 when another does. */
export const findOwned = <T>(
  table: ReferenceTable,
  entity: string,
  id: string,
  fetch: (tenantId: string) => Effect.Effect<T | undefined>
) =>
  Effect.gen(function*() {
    const tenant = yield* CurrentTenant
    yield* ensureOwned(table, id)
    const row = yield* fetch(tenant.id)
    if (row === undefined) return yield* new NotFound({ entity, id })
    return row
  })

/**
 * spec 7.4 (DECISIONS: the 409-before-422 order): a refused body whose unique value another record already has is 409,
 * not the 422 (`e`, the refusal it replaces). Looked up only on that error path, and only when `value` is one worth
 * looking up (a value that could be stored in the unique column; else the refusal stands).
 */
export const takenFirst = <V, R>(o: {
  readonly field: string
  readonly value: V | undefined
  /** True when another record (of the tenant, within the same parent) has this value. */
  readonly taken: (value: V) => Effect.Effect<boolean, never, R>
  readonly message: (value: V) => string
}) =>
<E>(e: E): Effect.Effect<never, Conflict | E, R> =>
  o.value === undefined
    ? Effect.fail(e)
    : Effect.flatMap(o.taken(o.value), (taken) => Effect.fail(taken ? new Conflict({ message: o.message(o.value!), field: o.field }) : e))

/** A field unique per tenant, or per parent record with `within` (a template item's sequence in its template). */
export interface UniqueField {
  readonly field: string
  /** The field naming the parent: a create's, or on PATCH the record's own unless the body names another. */
  readonly within?: string
  /** The values worth looking up (default: a name, `isNameCandidate`). */
  readonly candidate?: (v: unknown) => v is string | number
}

export interface CrudStore<T> {
  /** Create as one statement: with a plan, its references checked first and its events written from the new record. */
  readonly insert: (row: NewRow<T>, plan?: CreatePlan) => Effect.Effect<T, Conflict | ValidationFailed | MissingReferences>
  readonly list: (tenantId: string, query: ListQuery<Record<string, FilterKind>, string>) => Effect.Effect<Slice<T>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<T>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<T | undefined>
  /** PATCH as one statement: the owner of the id, the references checked, the update. */
  readonly patch: PatchStatement<T>
  /** Delete as one statement, with the owner of the id, and `events` about the deleted record; Conflict while other records reference it. */
  readonly remove: (tenantId: string, id: string, events?: ReadonlyArray<EventPlan>) => Effect.Effect<RemoveOutcome, Conflict>
  /**
   * True when another record of the tenant has this value in the resource's unique field; with a unique field
   * `within` a parent, another record of the parent `within` names (undefined: the parent of record `exceptId`).
   */
  readonly taken: (tenantId: string, value: string | number, exceptId?: string, within?: string) => Effect.Effect<boolean>
}

type Services = CurrentTenant

export interface Crud<T> {
  readonly create: (input: unknown) => Effect.Effect<T, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<T>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<T>, NotFound | Forbidden, Services>
  readonly update: (id: string, input: unknown) => Effect.Effect<JsonText<T>, NotFound | Forbidden | Conflict | ValidationFailed, Services>
  /** Hard delete; 409 while other records reference it. */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}

export const makeCrud = <T>(o: {
  readonly entity: string
  readonly table: ReferenceTable
  readonly create: Schema.Struct<any> & { readonly DecodingServices: never }
  /** The record a create makes: its fields that `create` does not take are refused on create. */
  readonly record: Schema.Struct<any>
  readonly patch: Schema.Struct<any> & { readonly DecodingServices: never }
  readonly listSpec: ListSpec<Record<string, FilterKind>, string>
  /** The field unique per tenant (or per parent), if any; a duplicate is 409 even when other fields are invalid (spec 7.4). */
  readonly unique?: string | UniqueField
  /** References of a decoded create or patch that must be the tenant's (422 FK_CONSTRAINT otherwise). */
  readonly refs?: (input: any) => ReadonlyArray<Reference>
  /**
   * The events of each write, written in its statement (outbox): on create from the decoded input, on PATCH from the
   * decoded changes (the store may add a condition on the record before, e.g. downtime.ended only when it was open),
   * on delete about the record deleted.
   */
  readonly events?: {
    readonly created?: (input: any) => ReadonlyArray<EventType>
    readonly updated?: (patch: any) => ReadonlyArray<EventType>
    readonly removed?: ReadonlyArray<EventType>
  }
  readonly store: CrudStore<T>
  readonly references: References["Service"]
}): Crud<T> => {
  const { store } = o
  const decodeCreate = decodeInput(o.create, o.entity, { record: o.record })
  const decodePatch = decodePatchInput(o.patch, o.entity)
  const withRefs = Effect.provideService(References, o.references)

  const unique: UniqueField | undefined = typeof o.unique === "string" ? { field: o.unique } : o.unique
  /** spec 7.4: a value the unique field already has elsewhere is 409 even when other fields are invalid. */
  const uniqueFirst = (input: unknown, exceptId?: string) => (e: ValidationFailed) =>
    Effect.gen(function*() {
      if (unique === undefined) return yield* e
      const tenant = yield* CurrentTenant
      const body = input !== null && typeof input === "object" ? input as Record<string, unknown> : {}
      const value = body[unique.field]
      const parent = unique.within === undefined ? undefined : body[unique.within]
      // a create names its parent; a PATCH may leave it out (the record's own), but one that cannot be an id names none
      const parentOk = unique.within === undefined || (parent === undefined ? exceptId !== undefined : typeof parent === "string" && isUuid(parent))
      const candidate = unique.candidate ?? isNameCandidate
      return yield* takenFirst({
        field: unique.field,
        value: parentOk && candidate(value) ? value : undefined,
        taken: (v) => store.taken(tenant.id, v, exceptId, parent as string | undefined),
        message: (v) => `a ${o.entity} with ${unique.field} ${v} already exists`
      })(e)
    })

  return {
    create: (raw) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const input = yield* decodeCreate(raw).pipe(Effect.catchTag("ValidationFailed", uniqueFirst(raw)))
        // the references are checked in the insert's statement, which writes nothing when one is missing
        const refs = o.refs?.(input) ?? []
        const plan: CreatePlan = { refs: checkedReferences(refs), events: (o.events?.created?.(input) ?? []).map(eventPlan) }
        return yield* store.insert({ ...(input as object), id: newId(), tenant_id: tenant.id } as NewRow<T>, plan).pipe(
          Effect.catchTag("MissingReferences", (e) => validationFailed(o.entity, missingReferenceDetails(o.entity, raw, refs, e.indexes)))
        )
      }),
    list: listWith(o.listSpec, store.list),
    get: (id) => readOwned(o.table, id, (tenantId) => store.read(tenantId, id)),
    update: (id, raw) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        // spec 7.4: 403 / 404 before 409 and 422, looked up only when the body is refused
        const patch = yield* decodePatch(raw).pipe(
          Effect.tapError(() => ensureOwned(o.table, id).pipe(withRefs)),
          Effect.catchTag("ValidationFailed", uniqueFirst(raw, id))
        )
        const refs = o.refs?.(patch) ?? []
        const events = (o.events?.updated?.(patch) ?? []).map(eventPlan)
        const outcome = yield* store.patch(tenant.id, id, patch as Record<string, unknown>, checkedReferences(refs), events)
        return yield* settlePatch({ table: o.table, id, root: o.entity, input: raw, refs }, outcome)
      }),
    remove: (id) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        yield* settleRemove(o.table, id, yield* store.remove(tenant.id, id, (o.events?.removed ?? []).map(eventPlan)))
      })
  }
}

/** The layer of a resource without rules of its own: `makeCrud` over its store and References. */
export const crudLayer = <I, T, SI>(
  tag: Context.Service<I, Crud<T>>,
  store: Context.Service<SI, CrudStore<T>>,
  o: Omit<Parameters<typeof makeCrud<T>>[0], "store" | "references">
) =>
  Layer.effect(tag, Effect.gen(function*() {
    return makeCrud<T>({ ...o, store: yield* store, references: yield* References })
  }))
