// Cells: standard CRUD for work cells (spec 4.12).
import { Context, Effect, Layer } from "effect"
import { type BadRequest, Conflict, type Forbidden, NotFound, type ValidationFailed } from "../errors.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { decodeListQuery, type Page, toPage } from "../query.ts"
import { ensureOwned } from "../references.ts"
import { decodeInput, decodePatchInput } from "../validation.ts"
import { type Cell, CellCreate, cellListSpec, CellPatch } from "./schema.ts"
import { CellStore } from "./store.ts"

type Services = CurrentTenant

export class Cells extends Context.Service<Cells, {
  readonly create: (input: unknown) => Effect.Effect<Cell, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Cell>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<Cell, NotFound | Forbidden, Services>
  readonly update: (id: string, input: unknown) => Effect.Effect<Cell, NotFound | Forbidden | Conflict | ValidationFailed, Services>
  /** Hard delete; 409 while jobs, parts or operations reference the cell (DECISIONS). */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/Cells") {
  static readonly layer = Layer.effect(Cells, Effect.gen(function*() {
    const store = yield* CellStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(CellCreate, "cell")
    const decodePatch = decodePatchInput(CellPatch, "cell")

    // spec 7.4 / DECISIONS: a duplicate name is 409 even when other fields are invalid
    const decodeNameFirst = <A>(decode: (i: unknown) => Effect.Effect<A, ValidationFailed>, input: unknown, exceptId?: string) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        return yield* decode(input).pipe(Effect.catchTag("ValidationFailed", (e) => {
          const name = (input as { name?: unknown } | null)?.name
          return typeof name === "string" && name.length > 0 && name.length <= 255
            ? store.nameTaken(tenant.id, name, exceptId).pipe(
              Effect.flatMap((taken) => Effect.fail(taken ? new Conflict({ message: `a cell named ${name} already exists`, field: "name" }) : e))
            )
            : Effect.fail(e)
        }))
      })

    return Cells.of({
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeNameFirst(decodeCreate, raw)
          return yield* store.insert({ ...input, id: newId(), tenant_id: tenant.id })
        }),
      list: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const q = yield* decodeListQuery(cellListSpec, raw)
          return toPage(q)(yield* store.list(tenant.id, q))
        }),
      get: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("cells", id)
          const cell = yield* store.get(tenant.id, id)
          if (cell === undefined) return yield* new NotFound({ entity: "cell", id })
          return cell
        }).pipe(withRefs),
      update: (id, raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("cells", id)
          const patch = yield* decodeNameFirst(decodePatch, raw, id)
          const cell = yield* store.update(tenant.id, id, patch)
          if (cell === undefined) return yield* new NotFound({ entity: "cell", id })
          return cell
        }).pipe(withRefs),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("cells", id)
          if (!(yield* store.remove(tenant.id, id))) return yield* new NotFound({ entity: "cell", id })
        }).pipe(withRefs)
    })
  }))
}
