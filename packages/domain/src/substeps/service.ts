// Substeps (spec 4.8): create, list, read, update, delete the checklist steps of an operation.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Crud, type CrudStore, makeCrud } from "../crud.ts"
import { References } from "../ports.ts"
import { Substep, SubstepCreate, substepListSpec, SubstepPatch } from "./schema.ts"

/**
 * Plain CRUD storage, plus: `completed_at` follows `completed` in the same statement. An insert or
 * update with `completed: true` stamps now() (an update keeps the first stamp when the substep was
 * already completed), `completed: false` clears it. A patch with `completed: true` writes step.completed in the
 * same statement when the step was not completed, read after its row lock, so concurrent patches write it once.
 * Substeps of a soft-deleted job are absent from list, get, update and remove. No unique field: `taken` is always
 * false.
 */
export class SubstepStore extends Context.Service<SubstepStore, CrudStore<Substep>>()("mes/domain/SubstepStore") {}

/** The operation must be the caller's tenant's (422 FK_CONSTRAINT otherwise, DECISIONS). */
export class Substeps extends Context.Service<Substeps, Crud<Substep>>()("mes/domain/Substeps") {
  static readonly layer = Layer.effect(Substeps, Effect.gen(function*() {
    return Substeps.of(makeCrud({
      entity: "substep",
      table: "substeps",
      create: SubstepCreate,
      record: Substep,
      patch: SubstepPatch,
      listSpec: substepListSpec,
      refs: (input: { operation_id?: string }) =>
        input.operation_id === undefined ? [] : [{ table: "operations", id: input.operation_id, path: ["operation_id"] }],
      events: { created: () => ["step.added"] },
      store: yield* SubstepStore,
      references: yield* References
    }))
  }))
}
