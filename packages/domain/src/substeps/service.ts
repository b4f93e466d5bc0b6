// Substeps (spec 4.8): create, list, read, update, delete the checklist steps of an operation.
import { Context, Effect, Layer } from "effect"
import { type Crud, type CrudStore, makeCrud } from "../crud.ts"
import { References } from "../ports.ts"
import { type Substep, SubstepCreate, substepListSpec, SubstepPatch } from "./schema.ts"

/**
 * Plain CRUD storage, plus: `completed_at` follows `completed` in the same statement. An insert or
 * update with `completed: true` stamps now() (an update keeps the first stamp when the substep was
 * already completed), `completed: false` clears it. Substeps of a soft-deleted job are absent from
 * list, get, update and remove. No unique field: `taken` is always false.
 */
export class SubstepStore extends Context.Service<SubstepStore, CrudStore<Substep>>()("mes/domain/SubstepStore") {}

/** The operation must be the caller's tenant's (422 FK_CONSTRAINT otherwise, DECISIONS). */
export class Substeps extends Context.Service<Substeps, Crud<Substep>>()("mes/domain/Substeps") {
  static readonly layer = Layer.effect(Substeps, Effect.gen(function*() {
    const crud = makeCrud({
      entity: "substep",
      table: "substeps",
      create: SubstepCreate,
      patch: SubstepPatch,
      listSpec: substepListSpec,
      refs: (input: { operation_id?: string }) =>
        input.operation_id === undefined ? [] : [{ table: "operations", id: input.operation_id, path: ["operation_id"] }],
      store: yield* SubstepStore,
      references: yield* References
    })
    return Substeps.of({
      ...crud,
      // TODO(events): a later issue emits `step.added` (spec 6.1) here, after the insert succeeds.
      create: (input) => crud.create(input),
      // TODO(events): a later issue emits `step.completed` here when the PATCH sets `completed: true`
      // on a substep that was not completed before; to emit it once under concurrent PATCHes, guard
      // the UPDATE on `completed = false` rather than reading the row first.
      update: (id, input) => crud.update(id, input)
    })
  }))
}
