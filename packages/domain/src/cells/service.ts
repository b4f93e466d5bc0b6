// Cells: standard CRUD for work cells (spec 4.12); names are unique per tenant.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Crud, type CrudStore, makeCrud } from "../crud.ts"
import { References } from "../ports.ts"
import { Cell, CellCreate, cellListSpec, CellPatch } from "./schema.ts"

export class CellStore extends Context.Service<CellStore, CrudStore<Cell>>()("mes/domain/CellStore") {}

/** Deletes are refused (409) while jobs, parts or operations reference the cell. */
export class Cells extends Context.Service<Cells, Crud<Cell>>()("mes/domain/Cells") {
  static readonly layer = Layer.effect(Cells, Effect.gen(function*() {
    return Cells.of(makeCrud({
      entity: "cell",
      table: "cells",
      create: CellCreate,
      record: Cell,
      patch: CellPatch,
      listSpec: cellListSpec,
      unique: "name",
      store: yield* CellStore,
      references: yield* References
    }))
  }))
}
