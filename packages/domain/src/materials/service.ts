// Materials: the catalog's CRUD (names unique per tenant; an entry parts use is not deleted, 409), and the
// rule that a part's material_id names an entry of the tenant and agrees with its `material`.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { type Crud, type CrudStore, crudLayer } from "../crud.ts"
import { detail, type Path, type ValidationDetail } from "../validation.ts"
import { Material, MaterialCreate, materialListSpec, MaterialPatch } from "./schema.ts"

export class MaterialStore extends Context.Service<MaterialStore, CrudStore<Material> & {
  /** The names of the tenant's catalog entries among `ids`. */
  readonly names: (tenantId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
}>()("mes/domain/MaterialStore") {}

export class Materials extends Context.Service<Materials, Crud<Material>>()("mes/domain/Materials") {
  static readonly layer = crudLayer(Materials, MaterialStore, {
    entity: "material",
    table: "materials",
    create: MaterialCreate,
    record: Material,
    patch: MaterialPatch,
    listSpec: materialListSpec,
    unique: "name"
  })
}

/** A part record's material fields, where the request has them. */
export interface MaterialFields {
  readonly material?: string | null | undefined
  readonly material_id?: string | null | undefined
}

/**
 * Settles `material` against `material_id` for part records: a record giving only material_id gets the
 * entry's name as `material`; giving both, they must agree (422). An id that is no entry of the tenant is
 * left to the reference check (422 FK_CONSTRAINT). One query, only when a record gives material_id.
 */
export const settleMaterials = <P extends MaterialFields>(
  store: MaterialStore["Service"],
  root: string,
  input: unknown,
  tenantId: string,
  records: ReadonlyArray<{ readonly fields: P; readonly path: Path }>
) =>
  Effect.gen(function*() {
    const ids = [...new Set(records.flatMap((r) => (r.fields.material_id == null ? [] : [r.fields.material_id])))]
    if (ids.length === 0) return { records: records.map((r) => r.fields), details: [] as Array<ValidationDetail> }
    const names = yield* store.names(tenantId, ids)
    const details: Array<ValidationDetail> = []
    const settled = records.map(({ fields, path }) => {
      const name = fields.material_id == null ? undefined : names.get(fields.material_id)
      if (name === undefined) return fields
      if (fields.material === undefined || fields.material === null) return { ...fields, material: name }
      if (fields.material !== name) details.push(materialDisagrees(root, input, path, name, fields))
      return fields
    })
    return { records: settled, details }
  })

/** The material fields of a job body's parts, each at its path (`parts[i]`), as `settleMaterials` takes them. */
export const jobPartMaterials = <P extends MaterialFields>(parts: ReadonlyArray<P>) =>
  parts.map((fields, i) => ({ fields, path: ["parts", i] as Path }))

/** The 422 detail of a part record whose `material` is not `name`, the name of its material_id. */
export const materialDisagrees = (root: string, input: unknown, path: Path, name: string, fields: MaterialFields) =>
  detail(root, input, [...path, "material"], "FK_CONSTRAINT", `material must be '${name}', the name of material_id ${fields.material_id}`, fields.material)

/** The reference a part record's material_id makes (the tenant's catalog). */
export const materialRef = (id: string | null | undefined, path: Path) =>
  id == null ? [] : [{ table: "materials" as const, id, path: [...path, "material_id"] }]
