// Cells: standard CRUD for work cells (spec 4.12); names are unique per tenant.
import * as Context from "effect/Context"
import { type Crud, type CrudStore, crudLayer } from "../crud.ts"
import { Cell, CellCreate, cellListSpec, CellPatch } from "./schema.ts"

export class CellStore extends Context.Service<CellStore, CrudStore<Cell>>()("mes/domain/CellStore") {}

/** Deletes are refused (409) while jobs, parts or operations reference the cell. */
export class Cells extends Context.Service<Cells, Crud<Cell>>()("mes/domain/Cells") {
  static readonly layer = crudLayer(Cells, CellStore, {
    entity: "cell",
    table: "cells",
    create: CellCreate,
    record: Cell,
    patch: CellPatch,
    listSpec: cellListSpec,
    unique: "name"
  })
}
