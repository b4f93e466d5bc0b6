// ERP sync (spec 4.1-4.3 sync and bulk-sync): upsert by (external_source, external_id). A record
// is one transaction and one statement of its store, which also reports what refused it. A bulk of
// jobs is one statement for all its records (each refused or synced on its own); other bulks, and a
// job bulk whose records share an external key or that the store refuses as a whole, run record by
// record in one transaction with a savepoint per record, so a failing record is reported and the
// others are kept.
import { materialDisagrees, materialRef } from "../materials/service.ts"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { Conflict, type DomainError, ValidationFailed } from "../errors.ts"
import { renameAliases } from "../fields.ts"
import { normalizeJobInput } from "../jobs/service.ts"
import { distinctCellNames, duplicates, planNested, unknownCellName, unknownCellNames } from "../jobs/nested.ts"
import { defaultPriority, JobSync } from "../jobs/schema.ts"
import { JobStore, type JobSyncPlan, type JobSyncResult, type SyncedRecordKey } from "../jobs/store.ts"
import { operationAliases, OperationSync } from "../operations/schema.ts"
import { operationSequenceExhausted, OperationStore, type OperationSyncOutcome, type OperationSyncPlan } from "../operations/store.ts"
import { PartSync } from "../parts/schema.ts"
import { loopDetail, namedParent, notInJob } from "../parts/service.ts"
import { PartStore, type PartSyncOutcome, type PartSyncPlan } from "../parts/store.ts"
import { CurrentTenant, newId, References, type SyncAction, Tx } from "../ports.ts"
import { CellSync } from "../cells/schema.ts"
import { ResourceSync } from "../resources/schema.ts"
import { checkedReferences, missingReferenceDetails, type Reference } from "../references.ts"
import type { JsonText } from "../json.ts"
import { sha256Hex } from "../tenants/keys.ts"
import { type Constraint, detail, decodeInput, failIfAny, isNameCandidate, isStorableText, type Path, validationFailed } from "../validation.ts"

export interface SyncResult {
  readonly action: SyncAction
  readonly id: string
  readonly external_id: string
}

export interface BulkSyncResult {
  readonly total: number
  readonly created: number
  readonly updated: number
  readonly unchanged: number
  readonly errors: number
  readonly results: ReadonlyArray<
    { readonly external_id: string | null; readonly id: string; readonly action: SyncAction } | {
      readonly external_id: string | null
      readonly action: "error"
      readonly error: string
    }
  >
}

export const MAX_BULK = 1000

/** Tables synced as one record each, with no parent (spec 4.10). */
export type RecordTable = "cells" | "resources"

export type RecordSyncRow = Record<string, unknown> & { readonly id: string; readonly tenant_id: string }

export class RecordSyncStore extends Context.Service<RecordSyncStore, {
  /**
   * Upserts the rows by (tenant, external_source, external_id) in one statement, one outcome per row in order;
   * Conflict on another unique key. The rows name distinct records.
   */
  readonly upsert: (table: RecordTable, rows: ReadonlyArray<RecordSyncRow>) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly action: SyncAction }>, Conflict>
}>()("mes/domain/RecordSyncStore") {}

type SyncError = Conflict | ValidationFailed

/** spec 4.10: a missing external_id says it is required for sync operations. */
const syncDecoder = <S extends Parameters<typeof decodeInput>[0]>(schema: S, root: string) => {
  const decode = decodeInput(schema, root)
  return (input: unknown) =>
    decode(input).pipe(Effect.mapError((e) =>
      validationFailed(root, e.details.map((d) =>
        (d.field === "external_id" || d.field === "external_source") && d.constraint === "NOT_NULL"
          ? { ...d, message: `${d.field} is required for sync operations` }
          : d
      ))
    )) as Effect.Effect<S["Type"], ValidationFailed>
}

/** One line for a bulk result: the message plus the first details. */
const describe = (e: DomainError): string =>
  e._tag === "ValidationFailed"
    ? `${e.message}: ${e.details.slice(0, 5).map((d) => d.field !== "" && d.message.startsWith(d.field) ? d.message : `${d.field || "(body)"} ${d.message}`).join("; ")}`
    : e.message

/** A record's external_id, where it has one. */
const externalIdOf = (item: unknown): string | null => {
  const id = item !== null && typeof item === "object" ? (item as { external_id?: unknown }).external_id : undefined
  return typeof id === "string" ? id : null
}

/** The result of a record that was refused. */
const refused = (externalId: string | null) => (e: SyncError) =>
  Effect.succeed<RecordResult>({ external_id: externalId, action: "error", error: describe(e) })

/**
 * The key and hash of each bulk record that names its job by external key (else undefined), for the unchanged
 * shortcut: records whose key appears once in the bulk (a repeated key is synced in order, record by record).
 */
const syncedRecordKeys = (items: ReadonlyArray<unknown>) =>
  Effect.promise(async (): Promise<Array<SyncedRecordKey | undefined>> => {
    const keyOf = (item: unknown) => {
      if (item === null || typeof item !== "object") return undefined
      const { external_id, external_source } = item as { external_id?: unknown; external_source?: unknown }
      // only a key the schemas accept (1-255 storable characters) can name a row; any other is refused when validated
      return isNameCandidate(external_id) && isNameCandidate(external_source) ? { external_id, external_source } : undefined
    }
    const keys = items.map(keyOf)
    const count = new Map<string, number>()
    for (const k of keys) if (k !== undefined) count.set(recordKey(k), (count.get(recordKey(k)) ?? 0) + 1)
    const text = (item: unknown) => {
      try {
        return JSON.stringify(item)
      } catch {
        return undefined // nested past what the stack holds: no shortcut, and validation refuses it (too deep)
      }
    }
    return Promise.all(keys.map(async (k, i) => {
      const json = k === undefined || count.get(recordKey(k)) !== 1 ? undefined : text(items[i])
      return json === undefined ? undefined : { ...k!, hash: await sha256Hex(json) }
    }))
  })

const recordKey = (k: { readonly external_source: string; readonly external_id: string }) => `${k.external_source}\u0000${k.external_id}`

/**
 * A check that no two plans name one row by external key (one statement could not write it twice): `taken(table,
 * row, i)` is true when plan `i` names a row of `table` that an earlier plan named. Plain loops: a bulk of 1,000
 * jobs has 26,000 rows (arrays of pairs per record cost 25 ms of a 1.3 s bulk).
 */
const externalKeyClaims = () => {
  const owner = new Map<string, number>()
  return (table: string, row: { readonly external_source?: unknown; readonly external_id?: unknown }, i: number) => {
    const key = `${table}\u0000${row.external_source}\u0000${row.external_id}`
    const seen = owner.get(key)
    owner.set(key, i)
    return seen !== undefined && seen !== i
  }
}

/** The claims of job plans: the job, its parts and its operations. */
const jobClaims = () => {
  const taken = externalKeyClaims()
  return (plan: JobSyncPlan, i: number) => {
    if (taken("j", plan.job, i)) return true
    for (const p of plan.parts) if (taken("p", p, i)) return true
    for (const o of plan.operations) if (taken("o", o, i)) return true
    return false
  }
}

/** Whether a part record names a parent (by id or by number). */
const namesParent = (item: unknown) =>
  item !== null && typeof item === "object" && ((item as Record<string, unknown>).parent_part_id !== undefined || (item as Record<string, unknown>).parent_part_number !== undefined)

/** A record planned: the plan for the store, and how the store's outcome for it answers. */
interface Planned<P, O> {
  readonly plan: P
  readonly settle: (outcome: O) => Effect.Effect<SyncResult, SyncError>
}

/**
 * Records per statement of a bulk sync: the next chunk is planned while the database writes the one before
 * (measured on 1,000 jobs × 5 × 4: one statement 1.30–1.37 s; chunks of 200 1.10–1.14 s, of 250 or 334
 * 1.11–1.14 s, of 100 1.16 s, of 50 1.40 s; a first chunk of 50 then 200s 1.25–1.30 s: each statement has a fixed cost).
 */
const BULK_CHUNK = 200

/** The records of a bulk body: `{<key>: [...]}` for any accepted key, or a bare array. */
const bulkItems = (root: string, body: unknown, keys: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    // the key the records came under, which a detail names (a bare array has none: the first accepted key)
    const key = body !== null && typeof body === "object" && !Array.isArray(body)
      ? keys.find((k) => (body as Record<string, unknown>)[k] !== undefined)
      : undefined
    // both keys: which list was meant is unknown, and taking one would drop the other's records unsaid
    const other = key === undefined ? undefined : keys.find((k) => k !== key && (body as Record<string, unknown>)[k] !== undefined)
    if (other !== undefined) {
      return yield* validationFailed(root, [
        detail(root, body, [keys[1]!], "ENUM_CONSTRAINT", `give the records under either ${keys.map((k) => `'${k}'`).join(" or ")}, not both`, null)
      ])
    }
    const items = Array.isArray(body) ? body : key === undefined ? undefined : (body as Record<string, unknown>)[key]
    if (!Array.isArray(items)) {
      return yield* validationFailed(root, [
        detail(root, body, [keys[0]!], "NOT_NULL", `body must carry an array of records under ${keys.map((k) => `'${k}'`).join(" or ")}`, null)
      ])
    }
    if (items.length > MAX_BULK) {
      return yield* validationFailed(root, [
        detail(root, body, [key ?? keys[0]!], "MAX_LENGTH", `at most ${MAX_BULK} records per request, got ${items.length}`, items.length)
      ])
    }
    return items as ReadonlyArray<unknown>
  })

export type BulkKind = "jobs" | "parts" | "operations" | "cells" | "resources"

/** POST /api-erp-sync/sync and /diff: `upsert` (default) writes every record; the others skip what they may not do. */
export type ErpSyncMode = "upsert" | "create_only" | "update_only"
const ERP_MODES: ReadonlyArray<ErpSyncMode> = ["upsert", "create_only", "update_only"]
/** The order records are applied in: a record's references come before it. */
export const ERP_ORDER = ["cells", "resources", "jobs", "parts", "operations"] as const

/**
 * Whether a mode allows what a record did. A job record is one record with the parts and operations it names: under
 * `update_only` it may not create any of them either (`inserted`: the record inserted a row, the job or one beneath
 * it); under `create_only` a job that exists answers `updated` whenever anything of it is written, so it is skipped.
 */
const allowed = (mode: ErpSyncMode, action: SyncAction, inserted = action === "created") =>
  mode === "upsert" || action === "unchanged" || (mode === "create_only" ? action === "created" : action === "updated" && !inserted)

export type RecordResult =
  | {
    readonly external_id: string | null
    readonly id: string
    readonly action: SyncAction | "skipped"
    /** In a diff, the fields an update would change (`parts` when only a job's parts or operations would). */
    readonly changed_fields?: ReadonlyArray<string>
  }
  | { readonly external_id: string | null; readonly action: "error"; readonly error: string }

export interface RunSummary {
  readonly total: number
  readonly created: number
  readonly updated: number
  readonly unchanged: number
  readonly skipped: number
  readonly errors: number
}

export interface ErpSyncReport extends RunSummary {
  readonly mode: ErpSyncMode
  readonly dry_run: boolean
  readonly results: Readonly<Record<(typeof ERP_ORDER)[number], ReadonlyArray<RecordResult>>>
}

const summarize = (results: ReadonlyArray<RecordResult>): RunSummary => ({
  total: results.length,
  created: results.filter((r) => r.action === "created").length,
  updated: results.filter((r) => r.action === "updated").length,
  unchanged: results.filter((r) => r.action === "unchanged").length,
  skipped: results.filter((r) => r.action === "skipped").length,
  errors: results.filter((r) => r.action === "error").length
})

/** A record whose action its mode does not allow: its savepoint is undone. */
class NotAllowed extends Data.TaggedError("NotAllowed")<{ readonly result: SyncResult }> {}
/** The end of a dry run: everything it did is undone, its report kept. */
class DryRunDone extends Data.TaggedError("DryRunDone")<{ readonly report: ErpSyncReport }> {}

/** The body of an ERP run: record lists per kind, ≤ 1,000 records in all, and the mode. */
const erpBody = (body: unknown) =>
  Effect.gen(function*() {
    const fail = (field: string, constraint: Constraint, message: string, value: unknown) =>
      validationFailed("erp_sync", [detail("erp_sync", body, field === "" ? [] : [field], constraint, message, value)])
    if (body === null || typeof body !== "object" || Array.isArray(body)) return yield* fail("", "TYPE_MISMATCH", "Request body must be a JSON object", body ?? null)
    const b = body as Record<string, unknown>
    const mode = b.mode ?? "upsert"
    if (!ERP_MODES.includes(mode as ErpSyncMode)) return yield* fail("mode", "ENUM_CONSTRAINT", `mode must be one of: ${ERP_MODES.join(", ")}`, mode)
    const unknownKeys = Object.keys(b).filter((k) => k !== "mode" && !(ERP_ORDER as ReadonlyArray<string>).includes(k))
    if (unknownKeys.length > 0) return yield* fail(unknownKeys[0]!, "ENUM_CONSTRAINT", `unknown key ${unknownKeys[0]}; record lists are ${ERP_ORDER.join(", ")}`, null)
    const items = {} as Record<(typeof ERP_ORDER)[number], ReadonlyArray<unknown>>
    for (const kind of ERP_ORDER) {
      const list = b[kind] ?? []
      if (!Array.isArray(list)) return yield* fail(kind, "TYPE_MISMATCH", `${kind} must be an array of records`, list)
      items[kind] = list
    }
    const total = ERP_ORDER.reduce((n, k) => n + items[k].length, 0)
    if (total > MAX_BULK) return yield* fail("", "MAX_LENGTH", `at most ${MAX_BULK} records per request in all, got ${total}`, total)
    return { items, mode: mode as ErpSyncMode }
  })

/** One bulk or ERP run, for the status of each external source. */
export interface SyncRun extends RunSummary {
  readonly id: string
  readonly tenant_id: string
  readonly kind: string
  readonly external_sources: ReadonlyArray<string>
}

export class SyncRecordStore extends Context.Service<SyncRecordStore, {
  /** The record of `kind` with this external key as the API shows it, or undefined. */
  readonly read: (kind: BulkKind, tenantId: string, source: string, externalId: string) => Effect.Effect<Record<string, unknown> | undefined>
}>()("mes/domain/SyncRecordStore") {}

/** The keys whose values differ between two readings of a record (its timestamps of change aside). */
const changedFields = (before: Record<string, unknown>, after: Record<string, unknown>) =>
  Object.keys(after).filter((k) => k !== "updated_at" && JSON.stringify(before[k]) !== JSON.stringify(after[k]))

export class SyncRunStore extends Context.Service<SyncRunStore, {
  readonly record: (run: SyncRun) => Effect.Effect<void>
  /** Per external source: the last run's time and counts, and the last runs (JSON built by the database). */
  readonly status: (tenantId: string) => Effect.Effect<JsonText<unknown>>
}>()("mes/domain/SyncRunStore") {}

export class Sync extends Context.Service<Sync, {
  /** PUT /api-jobs/sync: upsert a job with optional nested parts and operations. */
  readonly job: (input: unknown) => Effect.Effect<SyncResult, SyncError, CurrentTenant>
  readonly part: (input: unknown) => Effect.Effect<SyncResult, SyncError, CurrentTenant>
  readonly operation: (input: unknown) => Effect.Effect<SyncResult, SyncError, CurrentTenant>
  /** PUT /api-cells/sync (spec 4.10). */
  readonly cell: (input: unknown) => Effect.Effect<SyncResult, SyncError, CurrentTenant>
  /** PUT /api-resources/sync (spec 4.10). */
  readonly resource: (input: unknown) => Effect.Effect<SyncResult, SyncError, CurrentTenant>
  /** POST /api-erp-sync/sync (or /diff with dryRun: the same, undone): every kind in dependency order, one transaction. */
  readonly erp: (body: unknown, options: { readonly dryRun: boolean }) => Effect.Effect<ErpSyncReport, ValidationFailed, CurrentTenant>
  /** GET /api-erp-sync/status. */
  readonly status: Effect.Effect<JsonText<unknown>, never, CurrentTenant>
  /** POST .../bulk-sync: up to 1000 records, each reported. */
  readonly bulk: (kind: BulkKind, body: unknown) => Effect.Effect<BulkSyncResult, ValidationFailed, CurrentTenant>
}>()("mes/domain/Sync") {
  static readonly layer = Layer.effect(Sync, Effect.gen(function*() {
    const jobs = yield* JobStore
    const parts = yield* PartStore
    const operations = yield* OperationStore
    const references = yield* References
    const tx = yield* Tx
    const provide = <A, E, R>(e: Effect.Effect<A, E, R>) =>
      e.pipe(Effect.provideService(References, references))
    const decodeJob = syncDecoder(JobSync, "job")
    const decodePart = syncDecoder(PartSync, "part")
    const decodeOperation = syncDecoder(OperationSync, "operation")

    const records = yield* RecordSyncStore
    const runs = yield* SyncRunStore
    const snapshots = yield* SyncRecordStore
    const synced = (s: { readonly id: string; readonly action: SyncAction }, externalId: string): SyncResult => ({
      action: s.action,
      id: s.id,
      external_id: externalId
    })

    /** A cell or resource record planned: the row with a plan id; the store's outcome answers it. */
    const planRecord = <S extends Parameters<typeof syncDecoder>[0]>(schema: S, root: string) => {
      const decode = syncDecoder(schema, root)
      return (raw: unknown) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = (yield* decode(raw)) as Record<string, unknown> & { readonly external_id: string }
          const plan: RecordSyncRow = { ...input, id: newId(), tenant_id: tenant.id }
          return { plan, settle: (outcome: { readonly id: string; readonly action: SyncAction }) => Effect.succeed(synced(outcome, input.external_id)) }
        })
    }
    const planCell = planRecord(CellSync, "cell")
    const planResource = planRecord(ResourceSync, "resource")
    const upsert = (table: RecordTable) => (rows: ReadonlyArray<RecordSyncRow>) => records.upsert(table, rows)

    /** A job record planned: the plan for the store, and how its outcome answers (a refusal names every reason). */
    const planJob = (raw: unknown) =>
      provide(Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const body = normalizeJobInput(raw)
        // the parts' materials are settled in the statement (a material left out takes its material_id's name)
        const input = defaultPriority(yield* decodeJob(body))
        const source = input.external_source
        const syncedParts = input.parts ?? []
        const opsInput = syncedParts.flatMap((p) => p.operations ?? [])
        // rows get ids of their own; the store keeps the stored ids of rows that already exist
        const jobId = newId()
        const nested = yield* planNested("job", body, jobId, syncedParts, ["parts"], syncedParts.map(() => newId()), { external_source: source })
        // one record names each part and operation once (the upsert could not write one row twice)
        const opPath = (k: number): Path => {
          let i = 0
          while (k >= (syncedParts[i]!.operations?.length ?? 0)) k -= syncedParts[i++]!.operations?.length ?? 0
          return ["parts", i, "operations", k, "external_id"]
        }
        const details = [
          ...duplicates("job", body, syncedParts, (p) => p.external_id, (i) => ["parts", i, "external_id"], "part external_id"),
          ...duplicates("job", body, opsInput, (o) => o.external_id, opPath, "operation external_id"),
          ...nested.details
        ]
        const refs: Array<Reference> = [...nested.refs]
        if (input.current_cell_id != null) refs.push({ table: "cells", id: input.current_cell_id, path: ["current_cell_id"] })
        const { parts: _p, ...jobFields } = input
        const plan: JobSyncPlan = {
          job: { ...jobFields, id: jobId, tenant_id: tenant.id },
          // the rows carry the records' external_id, and external_source from planNested
          parts: nested.parts,
          operations: nested.operations,
          refs: checkedReferences(refs),
          cellNames: distinctCellNames(nested),
          // a request refused already still learns every reason, in the same round trip
          dryRun: details.length > 0
        }
        const settle = (outcome: JobSyncResult) =>
          Effect.gen(function*() {
            if (outcome._tag === "Synced") return synced(outcome, input.external_id)
            yield* failIfAny("job", [
              ...outcome.partsElsewhere.map((i) =>
                detail("job", body, ["parts", i, "external_id"], "UNIQUE_CONSTRAINT", `part ${syncedParts[i]!.external_id} belongs to another job`)
              ),
              ...details,
              ...outcome.materialsDiffer.map(({ name, part }) => materialDisagrees("job", body, ["parts", part], name, syncedParts[part]!)),
              ...unknownCellNames("job", body, nested, outcome.missingCells),
              ...missingReferenceDetails("job", body, refs, outcome.missingRefs)
            ])
            return yield* new Conflict({ message: "a synced operation belongs to another part" })
          })
        return { plan, settle }
      }))

    /** One record synced: planned, written as a bulk of one, answered. */
    const syncOne = <P, O, R>(
      planned: Effect.Effect<Planned<P, O>, SyncError, R>,
      write: (plans: ReadonlyArray<P>) => Effect.Effect<ReadonlyArray<O>, Conflict>
    ) => Effect.flatMap(planned, ({ plan, settle }) => Effect.flatMap(write([plan]), (outcomes) => settle(outcomes[0]!)))
    const job = (raw: unknown) => syncOne(planJob(raw), jobs.sync)
    const cell = (raw: unknown) => syncOne(planCell(raw), upsert("cells"))
    const resource = (raw: unknown) => syncOne(planResource(raw), upsert("resources"))

    /**
     * The records of a bulk as ONE statement per chunk (bulk-sync): every record planned, then all synced at once.
     * Undefined, having written nothing, when two records name one row by external key (`claim`) or the store
     * refuses a statement (a unique key taken, a sync overtaken): the record-by-record path then says which
     * record it was.
     */
    const syncAtOnce = <P, O>(
      items: ReadonlyArray<unknown>,
      planRecord: (item: unknown) => Effect.Effect<Planned<P, O>, SyncError, CurrentTenant>,
      claim: (plan: P, i: number) => boolean,
      write: (plans: ReadonlyArray<P>) => Effect.Effect<ReadonlyArray<O>, Conflict>
    ) =>
      Effect.gen(function*() {
        // a chunk planned: its records' plans, and the write of those that planned (made here, so that the store
        // builds the statement's parameter while the database still writes the chunk before); Conflict when a
        // plan names a row an earlier one named
        const planChunk = (from: number) =>
          Effect.gen(function*() {
            const chunk = yield* Effect.forEach(items.slice(from, from + BULK_CHUNK), (item) => Effect.result(planRecord(item)))
            const plans = chunk.flatMap((r) => (Result.isSuccess(r) ? [r.success.plan] : []))
            if (plans.some((plan, i) => claim(plan, from + i))) return yield* new Conflict({ message: "two records name one row" })
            return { chunk, write: plans.length === 0 ? Effect.succeed([]) : write(plans) }
          })
        const planned: Array<Result.Result<Planned<P, O>, SyncError>> = []
        const outcomes: Array<O> = []
        // one transaction, one statement per chunk of records; while the database writes a chunk, the next one is
        // planned (JavaScript and PostgreSQL each keep a core busy instead of taking turns). The first chunk is
        // planned before the transaction takes a connection. Two records naming one row, a unique key taken or a
        // sync overtaken undo every chunk (Conflict).
        const writeChunks = (first: Effect.Success<ReturnType<typeof planChunk>>) =>
          Effect.gen(function*() {
            let current = first
            for (let from = BULK_CHUNK; ; from += BULK_CHUNK) {
              const [synced, following] = yield* Effect.all([
                current.write,
                from < items.length ? planChunk(from) : Effect.succeed(undefined)
              ], { concurrency: 2 })
              planned.push(...current.chunk)
              outcomes.push(...synced)
              if (following === undefined) return true
              current = following
            }
          })
        const written = items.length === 0 || (yield* planChunk(0).pipe(
          Effect.flatMap((first) => tx.transaction(writeChunks(first))),
          Effect.catchTag("Conflict", () => Effect.succeed(false))
        ))
        if (!written) return undefined
        let next = 0
        return yield* Effect.forEach(planned, (r, i) =>
          (Result.isSuccess(r) ? r.success.settle(outcomes[next++]!) : Effect.fail(r.failure)).pipe(
            Effect.map((s): RecordResult => ({ external_id: s.external_id, id: s.id, action: s.action })),
            Effect.catch(refused(externalIdOf(items[i])))
          ))
      })

    /**
     * A bulk of job records at once; records sent again byte for byte onto rows nobody wrote since are unchanged
     * without planning them.
     */
    const jobsAtOnce = (all: ReadonlyArray<unknown>) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const keys = yield* syncedRecordKeys(all)
        const known = yield* jobs.syncedUnchanged(tenant.id, keys.filter((k) => k !== undefined))
        const shortcut = keys.map((k) => (k === undefined ? undefined : known.unchanged.get(recordKey(k))))
        const rest = all.flatMap((_, i) => (shortcut[i] === undefined ? [i] : []))
        const results = yield* syncAtOnce(rest.map((i) => all[i]), planJob, jobClaims(), jobs.sync)
        if (results === undefined) return undefined
        const synced = rest.flatMap((i, j) => {
          const key = keys[i]
          const result = results[j]!
          return key !== undefined && result.action !== "error" ? [{ ...key, job_id: result.id }] : []
        })
        if (synced.length > 0) yield* jobs.rememberSynced(tenant.id, known.snapshot, synced)
        let r = 0
        return all.map((_, i): RecordResult =>
          shortcut[i] !== undefined ? { external_id: keys[i]!.external_id, id: shortcut[i]!, action: "unchanged" } : results[r++]!
        )
      })

    /**
     * A part record planned (spec 4.2 sync). Its statement settles the material (one left out takes its material_id's
     * name) and finds a parent it names (parent_part_id, else parent_part_number) among the parts of its job, refusing
     * one that is not there or whose chain holds the part.
     */
    const planPart = (raw: unknown) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const input = yield* decodePart(raw)
        const source = input.external_source
        const parent = namedParent(input)
        const refs: Array<Reference> = [
          ...(input.current_cell_id != null ? [{ table: "cells" as const, id: input.current_cell_id, path: ["current_cell_id"] }] : []),
          ...materialRef(input.material_id, [])
        ]
        const { job_external_id: _j, parent_part_number: _n, parent_part_id: _pp, ...fields } = input
        const plan: PartSyncPlan = {
          part: { ...fields, id: newId(), tenant_id: tenant.id },
          jobExternalId: input.job_external_id,
          refs: checkedReferences(refs),
          ...(namesParent(input) ? { parent: { id: input.parent_part_id ?? null, number: parent.number ?? null } } : {})
        }
        // the refusals in the order they were checked when the record was read first: the material, the job, the
        // part's place, the parent, each alone; then the references
        const settle = (outcome: PartSyncOutcome) =>
          Effect.gen(function*() {
            if (outcome._tag === "Synced") return synced(outcome, input.external_id)
            if (outcome.materialName !== null) return yield* validationFailed("part", [materialDisagrees("part", raw, [], outcome.materialName, input)])
            if (outcome.noJob) {
              return yield* validationFailed("part", [
                detail("part", raw, ["job_external_id"], "FK_CONSTRAINT", `no job with external_id ${input.job_external_id} from ${source}`)
              ])
            }
            if (outcome.elsewhere) return yield* new Conflict({ message: `part ${input.external_id} belongs to another job` })
            if (outcome.noParent) return yield* validationFailed("part", [notInJob(raw, parent.field, parent.value)])
            if (outcome.cycle) return yield* validationFailed("part", [loopDetail(raw, parent.field, outcome.parentSelf)])
            return yield* validationFailed("part", missingReferenceDetails("part", raw, refs, outcome.missingRefs))
          })
        return { plan, settle }
      })
    const part = (raw: unknown) => syncOne(planPart(raw), parts.sync)

    /** An operation record planned (spec 4.3 sync): a refusal names the part or cell it could not find. */
    const planOperation = (raw: unknown) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const body = renameAliases(raw, operationAliases)
        const input = yield* decodeOperation(body)
        const source = input.external_source
        const { part_external_id: _p, cell_name: _c, ...fields } = input
        const plan: OperationSyncPlan = {
          operation: { ...fields, id: newId(), tenant_id: tenant.id },
          partExternalId: input.part_external_id,
          cellName: input.cell_name
        }
        const settle = (outcome: OperationSyncOutcome) =>
          Effect.gen(function*() {
            if (outcome._tag === "Synced") return synced(outcome, input.external_id)
            if (outcome.sequenceExhausted) return yield* new Conflict(operationSequenceExhausted)
            yield* failIfAny("operation", [
              ...(outcome.noPart
                ? [detail("operation", body, ["part_external_id"], "FK_CONSTRAINT", `no part with external_id ${input.part_external_id} from ${source}`)]
                : []),
              ...(outcome.noCell ? [unknownCellName("operation", body, input.cell_name, ["cell_name"])] : [])
            ])
            return yield* new Conflict({ message: `operation ${input.external_id} belongs to another part` })
          })
        return { plan, settle }
      })
    const operation = (raw: unknown) => syncOne(planOperation(raw), operations.sync)

    /** A job record of an ERP run: its result, and whether it inserted a row (the job, or a part or operation beneath it). */
    const jobOfRun = (raw: unknown) =>
      Effect.flatMap(planJob(raw), ({ plan, settle }) =>
        Effect.flatMap(jobs.sync([plan]), ([outcome]) =>
          Effect.map(settle(outcome!), (r) => ({ ...r, inserted: outcome!._tag === "Synced" && outcome!.inserted }))))
    const one = { jobs: jobOfRun, parts: part, operations: operation, cells: cell, resources: resource }

    /**
     * One record in its own savepoint: a refusal, or an action its mode does not allow, undoes only that record.
     * With `compare` (a diff), an update also reports which fields it changes: the record read before and after.
     */
    const inSavepoint = (kind: BulkKind, item: unknown, mode: ErpSyncMode, compare = false) => {
      const key = item !== null && typeof item === "object" ? item as { external_source?: unknown } : {}
      const externalId = externalIdOf(item)
      const reading = (tenantId: string) =>
        compare && isNameCandidate(externalId) && isNameCandidate(key.external_source)
          ? snapshots.read(kind, tenantId, key.external_source, externalId)
          : Effect.succeed(undefined)
      return tx.transaction(Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const before = yield* reading(tenant.id)
        const r: SyncResult & { readonly inserted?: boolean } = yield* one[kind](item)
        if (!allowed(mode, r.action, r.inserted)) return yield* new NotAllowed({ result: r })
        if (r.action !== "updated" || before === undefined) return { ...r }
        const after = yield* reading(tenant.id)
        const fields = after === undefined ? [] : changedFields(before, after)
        return { ...r, changed_fields: fields.length === 0 && kind === "jobs" ? ["parts"] : fields }
      })).pipe(
        Effect.map((r): RecordResult => ({ external_id: r.external_id, id: r.id, action: r.action, ...("changed_fields" in r ? { changed_fields: r.changed_fields } : {}) })),
        Effect.catchTag("NotAllowed", (e) => Effect.succeed<RecordResult>({ external_id: e.result.external_id, id: e.result.id, action: "skipped" })),
        Effect.catch(refused(externalId))
      )
    }

    /** Notes a bulk or ERP run for GET /api-erp-sync/status, in the run's transaction. */
    const recordRun = (kind: string, items: ReadonlyArray<unknown>, summary: RunSummary) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const sources = [...new Set(items.flatMap((i) => {
          const s = i !== null && typeof i === "object" ? (i as { external_source?: unknown }).external_source : undefined
          return typeof s === "string" && s !== "" && isStorableText(s) ? [s] : []
        }))]
        yield* runs.record({ id: newId(), tenant_id: tenant.id, kind, external_sources: sources, ...summary })
      })
    // DECISIONS: bulk-sync body keys
    const keys = { jobs: ["items", "jobs"], parts: ["parts", "items"], operations: ["operations", "items"], cells: ["cells", "items"], resources: ["resources", "items"] }
    const roots = { jobs: "job", parts: "part", operations: "operation", cells: "cell", resources: "resource" }

    return Sync.of({
      job,
      part,
      operation,
      cell,
      resource,
      status: Effect.flatMap(Effect.service(CurrentTenant), (tenant) => runs.status(tenant.id)),
      bulk: (kind, body) =>
        Effect.gen(function*() {
          const items = yield* bulkItems(roots[kind], body, keys[kind])
          return yield* tx.transaction(Effect.gen(function*() {
            const taken = externalKeyClaims()
            const claim = <P>(table: string, rowOf: (plan: P) => object) => (plan: P, i: number) => taken(table, rowOf(plan), i)
            const atOnce = kind === "jobs"
              ? yield* jobsAtOnce(items)
              : kind === "operations"
              ? yield* syncAtOnce(items, planOperation, claim("o", (p) => p.operation), operations.sync)
              // a parent is found among the rows the records before it may write, which one statement would not see:
              // such a bulk goes record by record
              : kind === "parts" && !items.some(namesParent)
              ? yield* syncAtOnce(items, planPart, claim("p", (p) => p.part), parts.sync)
              : kind === "cells"
              ? yield* syncAtOnce(items, planCell, claim("c", (p) => p), upsert("cells"))
              : kind === "resources"
              ? yield* syncAtOnce(items, planResource, claim("r", (p) => p), upsert("resources"))
              : undefined
            const results = atOnce ?? (yield* Effect.forEach(items, (item) => inSavepoint(kind, item, "upsert")))
            const summary = summarize(results)
            yield* recordRun(`${kind}.bulk-sync`, items, summary)
            // bulk-sync always upserts: nothing is skipped, and its envelope has no such count
            const { skipped: _skipped, ...counts } = summary
            return { ...counts, results } as BulkSyncResult
          }))
        }),
      erp: (body, options) =>
        Effect.gen(function*() {
          const { items, mode } = yield* erpBody(body)
          // dependency order: what a record references is synced before it
          const run = Effect.gen(function*() {
            const results: Record<string, ReadonlyArray<RecordResult>> = {}
            for (const kind of ERP_ORDER) results[kind] = yield* Effect.forEach(items[kind], (item) => inSavepoint(kind, item, mode, options.dryRun))
            const summary = summarize(ERP_ORDER.flatMap((k) => results[k]!))
            return { mode, dry_run: options.dryRun, ...summary, results } as ErpSyncReport
          })
          if (!options.dryRun) {
            return yield* tx.transaction(Effect.tap(run, (report) => recordRun("erp-sync", ERP_ORDER.flatMap((k) => items[k]), report)))
          }
          // a dry run does everything a sync would, in a transaction that is undone at the end
          return yield* tx.transaction(Effect.flatMap(run, (report) => Effect.fail(new DryRunDone({ report })))).pipe(
            Effect.catchTag("DryRunDone", (done) => Effect.succeed(done.report))
          )
        })
    })
  }))
}
