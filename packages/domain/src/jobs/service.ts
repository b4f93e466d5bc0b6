// Jobs: nested create, list, read, update, soft delete (spec 4.1).
import { jobPartMaterials, materialDisagrees, MaterialStore, settleMaterials } from "../materials/service.ts"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type BadRequest, Conflict, type Forbidden, InvalidStateTransition, type NotFound, type ValidationFailed } from "../errors.ts"
import { actionPlan, moveEvent, type MovePlan, patchPlan, refuseAction, refuseMove, rowEvents, settleMove } from "../lifecycle.ts"
import { readOwned, settlePatch, settleRemove, takenFirst } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { eventPlan } from "../events.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkedReferences, checkReferences, ensureOwned, missingReferenceDetails, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, validationFailed, isNameCandidate } from "../validation.ts"
import { renameAliases } from "../fields.ts"
import { operationAliases } from "../operations/schema.ts"
import { type JobAction, jobMachine } from "./lifecycle.ts"
import { checkCellNames, distinctCellNames, planNested, unknownCellNames } from "./nested.ts"
import { defaultPriority, Job, JobCreate, jobAliases, jobListSpec, JobPatch, type JobStatus } from "./schema.ts"
import { type JobDetail, JobStore, type JobWithParts } from "./store.ts"
import type { BatchStatus } from "../batches/schema.ts"

/**
 * The statuses of a batch that still moves its operations (start, stop, add-operations): a job with an operation in
 * such a batch is not deleted, since its operations would be hidden yet moved (DECISIONS).
 */
const batchHoldsJobIn: ReadonlyArray<BatchStatus> = ["draft", "ready", "in_progress"]

/** The answer of a nested create (DECISIONS: data.job plus the spec's flat form). */
export interface JobCreated {
  readonly job: JsonText<JobDetail>
  readonly job_id: string
  readonly job_number: string
  readonly parts: ReadonlyArray<{
    readonly part_id: string
    readonly part_number: string
    readonly operations: ReadonlyArray<{ readonly operation_id: string; readonly operation_name: string }>
  }>
}

/** The answer of a job lifecycle action (spec 4.4). */
export interface JobTransitioned {
  readonly job: JsonText<Job>
  readonly action: JobAction
  readonly previous_status: JobStatus
  readonly new_status: JobStatus
}

type Services = CurrentTenant

/** Applies input aliases at every level of a nested job (DECISIONS: aliases). */
export const normalizeJobInput = (raw: unknown): unknown => {
  const job = renameAliases(raw, jobAliases) as Record<string, unknown>
  if (job === null || typeof job !== "object" || !Array.isArray(job.parts)) return job
  // copies only of what an alias was renamed in (and of what holds it): most bodies name none
  const parts: Array<unknown> = job.parts
  let renamedParts: Array<unknown> | undefined
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Record<string, unknown> | null
    if (part === null || typeof part !== "object" || !Array.isArray(part.operations)) continue
    const operations: Array<unknown> = part.operations
    let renamed: Array<unknown> | undefined
    for (let j = 0; j < operations.length; j++) {
      const operation = renameAliases(operations[j], operationAliases)
      if (operation !== operations[j]) (renamed ??= [...operations])[j] = operation
    }
    if (renamed !== undefined) (renamedParts ??= [...parts])[i] = { ...part, operations: renamed }
  }
  return renamedParts === undefined ? job : { ...job, parts: renamedParts }
}

export class Jobs extends Context.Service<Jobs, {
  /** Creates a job with its parts and operations in one statement (spec 4.1 POST); emits job.created and part.created. */
  readonly create: (input: unknown) => Effect.Effect<JobCreated, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<JobWithParts>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<JobDetail>, NotFound | Forbidden, Services>
  /** PATCH: field updates; a status change must be a move of the job lifecycle (DECISIONS). */
  readonly update: (
    id: string,
    input: unknown
  ) => Effect.Effect<JsonText<Job>, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /** A lifecycle action of spec 3.1 (start, stop, complete, resume) as one guarded statement. */
  readonly transition: (
    id: string,
    action: JobAction
  ) => Effect.Effect<JobTransitioned, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /**
   * Soft delete: the job disappears from queries and frees its number (spec 4.1, DECISIONS); 409 while one of its
   * operations is in a batch not completed or cancelled.
   */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/Jobs") {
  static readonly layer = Layer.effect(Jobs, Effect.gen(function*() {
    const store = yield* JobStore
    const materialStore = yield* MaterialStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(JobCreate, "job", { record: Job })
    const decodePatch = decodePatchInput(JobPatch, "job")

    const jobNumberConflict = (jobNumber: string) =>
      new Conflict({ message: `job_number ${jobNumber} already exists`, field: "job_number" })

    const create = (raw: unknown) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const input = normalizeJobInput(raw)
        // spec 7.4 / DECISIONS: a duplicate job_number is 409 even when other fields are invalid
        const n = (input as { job_number?: unknown } | null)?.job_number
        const decoded = yield* decodeCreate(input).pipe(Effect.catchTag("ValidationFailed", takenFirst({
          field: "job_number",
          value: isNameCandidate(n) ? n : undefined,
          taken: (v) => store.numberTaken(tenant.id, v),
          message: (v) => jobNumberConflict(v).message
        })))
        const jobId = newId()
        // the parts' materials are settled in the statement (a material left out takes its material_id's name)
        const plan = yield* planNested("job", input, jobId, decoded.parts)
        const refs = [...plan.refs]
        if (decoded.current_cell_id != null) refs.push({ table: "cells", id: decoded.current_cell_id, path: ["current_cell_id"] })
        if (plan.details.length > 0) {
          // the error path may take more round trips: 409 first (spec 7.4), then every problem at once
          if (yield* store.numberTaken(tenant.id, decoded.job_number)) return yield* jobNumberConflict(decoded.job_number)
          const materials = yield* settleMaterials(materialStore, "job", input, tenant.id, jobPartMaterials(decoded.parts))
          return yield* validationFailed("job", [
            ...plan.details,
            ...materials.details,
            ...(yield* checkCellNames("job", input, plan)),
            ...(yield* checkReferences("job", input, refs))
          ])
        }
        const { parts: _parts, ...jobFields } = decoded
        const result = yield* store.createNested({
          job: { ...jobFields, id: jobId, tenant_id: tenant.id },
          parts: plan.parts,
          operations: plan.operations,
          refs: checkedReferences(refs),
          cellNames: distinctCellNames(plan),
          events: { job: eventPlan("job.created"), part: eventPlan("part.created") }
        }).pipe(Effect.catchTag("Conflict", (e) => Effect.fail(e.field === "job_number" ? jobNumberConflict(decoded.job_number) : e)))
        if (result._tag === "Refused") {
          if (result.taken || (result.missingRefs.length === 0 && result.missingCells.length === 0 && result.materialsDiffer.length === 0)) {
            return yield* jobNumberConflict(decoded.job_number)
          }
          return yield* validationFailed("job", [
            ...result.materialsDiffer.map(({ name, part }) => materialDisagrees("job", input, ["parts", part], name, decoded.parts[part]!)),
            ...unknownCellNames("job", input, plan, result.missingCells),
            ...missingReferenceDetails("job", input, refs, result.missingRefs)
          ])
        }
        return {
          job: result.job,
          job_id: jobId,
          job_number: decoded.job_number,
          parts: plan.parts.map((p) => ({
            part_id: p.id,
            part_number: p.part_number!,
            operations: plan.operations.filter((o) => o.part_id === p.id).map((o) => ({ operation_id: o.id, operation_name: o.operation_name! }))
          }))
        } satisfies JobCreated
      }).pipe(withRefs)

    /** The event of a lifecycle row: job.completed as spec 6.2, the others as docs/events.md. */

    /** The 409 a refused PATCH status names: the current status and those a move to target needs. */
    const move = (id: string, plan: MovePlan, refusal: (current: string) => InvalidStateTransition, refs: ReadonlyArray<Reference> = [], input: unknown = {}) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const outcome = yield* store.move(tenant.id, id, plan, checkedReferences(refs))
        return yield* settleMove({
          table: "jobs",
          id,
          plan,
          refusal,
          recheck: store.status(tenant.id, id),
          refs: { list: refs, root: "job", input, first: true }
        }, outcome)
      })

    const update = (id: string, raw: unknown) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const input = renameAliases(raw, jobAliases)
        // spec 7.4: 403 / 404 before 422
        const patch = defaultPriority(yield* decodePatch(input).pipe(Effect.tapError(() => ensureOwned("jobs", id).pipe(withRefs))))
        const refs: Array<Reference> = patch.current_cell_id != null ? [{ table: "cells", id: patch.current_cell_id, path: ["current_cell_id"] }] : []
        const { status, ...changes } = patch
        if (status === undefined) {
          const outcome = yield* store.patch(tenant.id, id, changes, [moveEvent("job.updated", false)], checkedReferences(refs))
          return yield* settlePatch({ table: "jobs", id, root: "job", input, refs }, outcome)
        }
        // DECISIONS: a status change is a move of the job lifecycle, with its side effects and event
        const plan = patchPlan(jobMachine, status, (t) => [moveEvent("job.updated", false), ...rowEvents(t)], changes)
        const moved = yield* move(id, plan, (current) => refuseMove(jobMachine, "job", current as JobStatus, status), refs, input)
        return moved.record
      })

    return Jobs.of({
      create,
      list: listWith(jobListSpec, store.list),
      get: (id) => readOwned("jobs", id, (tenantId) => store.read(tenantId, id)),
      update,
      transition: (id, action) =>
        Effect.gen(function*() {
          const plan = actionPlan(jobMachine, action, rowEvents)
          const t = jobMachine.find((r) => r.action === action)!
          const moved = yield* move(id, plan, refuseAction("job", t))
          return { job: moved.record, action, previous_status: moved.previous as JobStatus, new_status: t.to }
        }),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const outcome = yield* store.softDelete(tenant.id, id, batchHoldsJobIn)
          // a hidden operation would stay in a batch that still starts or completes it (DECISIONS)
          if (outcome.heldBy !== undefined) {
            return yield* new Conflict({
              message: `job cannot be deleted: one of its operations belongs to batch ${outcome.heldBy}, which is not completed or cancelled; stop, cancel or delete the batch first`
            })
          }
          yield* settleRemove("jobs", id, outcome)
        })
    })
  }))
}

