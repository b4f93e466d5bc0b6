// Jobs: nested create, list, read, update, soft delete (spec 4.1).
import { Context, Effect, Layer } from "effect"
import { Conflict, type Forbidden, type InvalidStateTransition, NotFound, type ValidationFailed } from "../errors.ts"
import { runAction, runPatchTo } from "../lifecycle.ts"
import { findOwned } from "../crud.ts"
import { emitter, type EventType, jobCompletedEvent, jobEvent, Outbox, partEvent } from "../events.ts"
import { CurrentTenant, newId, References, Tx } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkReferences, ensureOwned } from "../references.ts"
import { TenantStore } from "../tenants/store.ts"
import { decodeInput, decodePatchInput, failIfAny } from "../validation.ts"
import { renameAliases } from "../fields.ts"
import { operationAliases } from "../operations/schema.ts"
import type { Operation } from "../operations/schema.ts"
import type { Part } from "../parts/schema.ts"
import { type JobAction, jobMachine } from "./lifecycle.ts"
import { planNested } from "./nested.ts"
import { type Job, JobCreate, jobAliases, jobListSpec, JobPatch, type JobStatus } from "./schema.ts"
import { type GuardedMove, type JobDetail, JobStore, type JobWithParts } from "./store.ts"
import type { BadRequest } from "../errors.ts"

/** The answer of a job lifecycle action (spec 4.4). */
export interface JobTransitioned {
  readonly job: Job
  readonly action: JobAction
  readonly previous_status: JobStatus
  readonly new_status: JobStatus
}

type Services = CurrentTenant

/** Applies input aliases at every level of a nested job (DECISIONS: aliases). */
export const normalizeJobInput = (raw: unknown): unknown => {
  const job = renameAliases(raw, jobAliases) as Record<string, unknown>
  if (job === null || typeof job !== "object" || !Array.isArray(job.parts)) return job
  return {
    ...job,
    parts: job.parts.map((p: unknown) => {
      if (p === null || typeof p !== "object" || !Array.isArray((p as Record<string, unknown>).operations)) return p
      const part = p as Record<string, unknown>
      return { ...part, operations: (part.operations as Array<unknown>).map((o) => renameAliases(o, operationAliases)) }
    })
  }
}

const assemble = (job: Job, parts: ReadonlyArray<Part>, operations: ReadonlyArray<Operation>): JobDetail => ({
  ...job,
  parts: parts.map((p) => ({ ...p, operations: operations.filter((o) => o.part_id === p.id) }))
})

export class Jobs extends Context.Service<Jobs, {
  /** Creates a job with its parts and operations in one transaction (spec 4.1 POST); emits job.created. */
  readonly create: (input: unknown) => Effect.Effect<JobDetail, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<JobWithParts>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JobDetail, NotFound | Forbidden, Services>
  /** PATCH: field updates; a status change must be a move of the job lifecycle (DECISIONS). */
  readonly update: (
    id: string,
    input: unknown
  ) => Effect.Effect<Job, NotFound | Forbidden | Conflict | ValidationFailed | InvalidStateTransition, Services>
  /** A lifecycle action of spec 3.1 (start, stop, complete, resume) as one guarded statement. */
  readonly transition: (
    id: string,
    action: JobAction
  ) => Effect.Effect<JobTransitioned, NotFound | Forbidden | Conflict | InvalidStateTransition, Services>
  /** Soft delete: the job disappears from queries and frees its number (spec 4.1, DECISIONS). */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden, Services>
}>()("mes/domain/Jobs") {
  static readonly layer = Layer.effect(Jobs, Effect.gen(function*() {
    const store = yield* JobStore
    const tenants = yield* TenantStore
    const emit = emitter(yield* Outbox)
    const references = yield* References
    const tx = yield* Tx
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(JobCreate, "job")
    const decodePatch = decodePatchInput(JobPatch, "job")

    const jobNumberConflict = (jobNumber: string) =>
      new Conflict({ message: `job_number ${jobNumber} already exists`, field: "job_number" })

    const create = (raw: unknown) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        const input = normalizeJobInput(raw)
        const decoded = yield* decodeCreate(input).pipe(
          Effect.catchTag("ValidationFailed", (e) => {
            // spec 7.4 / DECISIONS: a duplicate job_number is 409 even when other fields are invalid
            const n = (input as { job_number?: unknown }).job_number
            return typeof n === "string" && n.length > 0 && n.length <= 255
              ? store.numberTaken(tenant.id, n).pipe(Effect.flatMap((taken) => Effect.fail(taken ? jobNumberConflict(n) : e)))
              : Effect.fail(e)
          })
        )
        const jobId = newId()
        const plan = yield* planNested("job", input, jobId, decoded.parts)
        const refs = [...plan.refs]
        if (decoded.current_cell_id != null) refs.push({ table: "cells", id: decoded.current_cell_id, path: ["current_cell_id"] })
        const refDetails = yield* checkReferences("job", input, refs)
        const details = [...plan.details, ...refDetails]
        // spec 7.4: a taken job_number is 409 before any 422; on a clean body the unique index answers it
        if (details.length > 0 && (yield* store.numberTaken(tenant.id, decoded.job_number))) {
          return yield* jobNumberConflict(decoded.job_number)
        }
        yield* failIfAny("job", details)
        const { parts: _parts, ...jobFields } = decoded
        return yield* tx.transaction(Effect.gen(function*() {
          const created = yield* store.insertNested({ ...jobFields, id: jobId, tenant_id: tenant.id }, plan.parts, plan.operations).pipe(
            Effect.catchTag("Conflict", (e) => Effect.fail(e.field === "job_number" ? jobNumberConflict(decoded.job_number) : e))
          )
          yield* tenants.countParts(tenant.id, plan.parts.length)
          const detail = assemble(created.job, created.parts, created.operations)
          yield* emit([jobEvent("job.created", detail), ...created.parts.map((p) => partEvent("part.created", p))])
          return detail
        }))
      }).pipe(withRefs)

    /** The lifecycle event of a move: job.completed as spec 6.2, the others as docs/events.md. */
    const moveEvent = (moved: { row: Job; previous: string; transition: { event?: EventType | undefined } }) => {
      const change = { previous_status: moved.previous, new_status: moved.row.status }
      return moved.transition.event === "job.completed"
        ? jobCompletedEvent(moved.row, change)
        : jobEvent(moved.transition.event!, moved.row, change)
    }

    const mover = (tenantId: string, id: string, changes?: Readonly<Record<string, unknown>>) => ({
      machine: jobMachine,
      entity: "job",
      id,
      move: (t: GuardedMove) => store.move(tenantId, id, t, changes),
      status: () => store.status(tenantId, id)
    })

    const update = (id: string, raw: unknown) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        yield* ensureOwned("jobs", id)
        const input = renameAliases(raw, jobAliases)
        const patch = yield* decodePatch(input)
        if (patch.current_cell_id != null) {
          yield* failIfAny("job", yield* checkReferences("job", input, [{ table: "cells", id: patch.current_cell_id, path: ["current_cell_id"] }]))
        }
        const { status, ...changes } = patch
        return yield* tx.transaction(Effect.gen(function*() {
          if (status === undefined) {
            const job = yield* store.update(tenant.id, id, changes)
            if (job === undefined) return yield* new NotFound({ entity: "job", id })
            yield* emit([jobEvent("job.updated", job)])
            return job
          }
          // DECISIONS: a status change is a move of the job lifecycle, with its side effects and event
          const moved = yield* runPatchTo({ ...mover(tenant.id, id, changes), target: status })
          yield* emit([jobEvent("job.updated", moved.row), moveEvent(moved)])
          return moved.row
        }))
      }).pipe(withRefs)

    return Jobs.of({
      create,
      list: listWith(jobListSpec, store.list),
      get: (id) => findOwned("jobs", "job", id, (tenantId) => store.get(tenantId, id)).pipe(withRefs),
      update,
      transition: (id, action) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("jobs", id)
          const moved = yield* tx.transaction(Effect.gen(function*() {
            const moved = yield* runAction({ ...mover(tenant.id, id), action })
            yield* emit([moveEvent(moved)])
            return moved
          }))
          return { job: moved.row, action, previous_status: moved.previous as JobStatus, new_status: moved.row.status }
        }).pipe(withRefs),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("jobs", id)
          if (!(yield* store.softDelete(tenant.id, id))) return yield* new NotFound({ entity: "job", id })
        }).pipe(withRefs)
    })
  }))
}

