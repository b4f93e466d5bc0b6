// Parts: standalone create, list, read, update, delete (spec 4.2).
import { materialDisagrees, materialRef } from "../materials/service.ts"
import { eventPlan } from "../events.ts"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { BadRequest, Forbidden, ValidationFailed } from "../errors.ts"
import { Conflict, NotFound } from "../errors.ts"
import { readOwned, settlePatch, settleRemove } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { listWith, type Page } from "../query.ts"
import { checkedReferences, checkOwner, ensureOwned, missingReferenceDetails, type Reference } from "../references.ts"
import { decodeInput, decodePatchInput, detail, validationFailed } from "../validation.ts"
import { Part, PartCreate, partListSpec, PartPatch } from "./schema.ts"
import { PartStore } from "./store.ts"

type Services = CurrentTenant

/**
 * How a body names a part's parent (spec 2.2): by parent_part_id when it gives one, else by parent_part_number
 * (`number`, which the write's statement looks up in the job); `field` is the one a refusal names, with its `value`.
 */
export const namedParent = (fields: { readonly parent_part_id?: string | null | undefined; readonly parent_part_number?: string | null | undefined }) => {
  const number = fields.parent_part_id == null ? fields.parent_part_number ?? undefined : undefined
  return number === undefined ? { number, field: "parent_part_id", value: fields.parent_part_id } : { number, field: "parent_part_number", value: number }
}

/** The 422 detail of a parent (by `field`, named `value`) that is no part of the job. */
export const notInJob = (input: unknown, field: string, value: unknown) =>
  detail("part", input, [field], "FK_CONSTRAINT", `part ${value} is not a part of this job`)

/** The 422 detail of a parent (by `field`) that would close a loop: the part itself, or one of its descendants. */
export const loopDetail = (input: unknown, field: string, self: boolean) =>
  detail("part", input, [field], "CIRCULAR_REFERENCE", self ? "a part cannot be its own parent" : "the parent is a descendant of this part")

export class Parts extends Context.Service<Parts, {
  /** Creates a part in an existing job of the tenant (spec 4.2 POST); emits part.created. */
  readonly create: (input: unknown) => Effect.Effect<Part, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Part>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<Part>, NotFound | Forbidden, Services>
  /** Updates any field but tenant_id, id, created_at (spec 4.2) in one statement; emits part.updated. */
  readonly update: (id: string, input: unknown) => Effect.Effect<JsonText<Part>, NotFound | Forbidden | Conflict | ValidationFailed, Services>
  /** Hard delete with its operations; refused with child parts (409). */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/Parts") {
  static readonly layer = Layer.effect(Parts, Effect.gen(function*() {
    const store = yield* PartStore
    const references = yield* References
    const provide = <A, E, R>(e: Effect.Effect<A, E, R>) =>
      e.pipe(Effect.provideService(References, references))
    const decodeCreate = decodeInput(PartCreate, "part", { record: Part })
    const decodePatch = decodePatchInput(PartPatch, "part")

    const cellRef = (fields: { readonly current_cell_id?: string | null | undefined; readonly material_id?: string | null | undefined }): Array<Reference> => [
      ...(fields.current_cell_id == null ? [] : [{ table: "cells" as const, id: fields.current_cell_id, path: ["current_cell_id"] }]),
      ...materialRef(fields.material_id, [])
    ]

    return Parts.of({
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeCreate(raw)
          const job: Reference = { table: "jobs", id: input.job_id, path: ["job_id"] }
          // one statement: the job, cell and material checked in it, the parent found in the job (a new part is in no
          // chain yet), material agreeing with material_id's name or taken from it, the part, the month's usage row
          // and part.created
          const refs = [job, ...cellRef(input)]
          const { parent_part_number, parent_part_id, ...fields } = input
          const parent = namedParent(input)
          return yield* store.create({ ...fields, id: newId(), tenant_id: tenant.id, parent_part_id: parent_part_id ?? null }, {
            refs: checkedReferences(refs),
            events: [eventPlan("part.created")]
          }, parent.number).pipe(Effect.catchTag("PartRefused", (e) =>
            // a job not the tenant's is the only detail; else the parent's, the material's, then the references'
            validationFailed("part", e.missingRefs.includes(0) ? missingReferenceDetails("part", raw, refs, [0]) : [
              ...(e.noParent ? [notInJob(raw, parent.field, parent.value)] : []),
              ...(e.materialDiffers ? [materialDisagrees("part", raw, [], e.materialName!, input)] : []),
              ...missingReferenceDetails("part", raw, refs, e.missingRefs)
            ])
          ))
        }),
      list: listWith(partListSpec, store.list),
      get: (id) => readOwned("parts", id, (tenantId) => store.read(tenantId, id)),
      update: (id, raw) =>
        provide(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // spec 7.4: 403 / 404 before 422
          const input = yield* decodePatch(raw).pipe(Effect.tapError(() => ensureOwned("parts", id)))
          const { parent_part_number, parent_part_id, ...fields } = input
          // the parent rules (same job, no loop) in the statement: by number when no id is given, else by id (null
          // clears); and material_id's name, which a material left out (null) takes
          const parent = namedParent(input)
          const changes: Record<string, unknown> = {
            ...fields,
            ...(parent_part_number !== undefined || parent_part_id !== undefined ? { parent_part_id: parent_part_id ?? null } : {}),
            ...(fields.material_id != null && fields.material === undefined ? { material: null } : {})
          }
          const refs = cellRef(input)
          const outcome = yield* store.patch(tenant.id, id, changes, checkedReferences(refs), parent.number)
          if (outcome.noParent || outcome.cycle || outcome.materialDiffers) {
            // 422 after 404 / 403: the parent's detail, the material's, then the references' (as a create's)
            yield* checkOwner("parts", id, outcome.owner)
            return yield* validationFailed("part", [
              ...(outcome.noParent ? [notInJob(raw, parent.field, parent.value)] : []),
              ...(outcome.cycle ? [loopDetail(raw, parent.field, outcome.parentId === id)] : []),
              ...(outcome.materialDiffers ? [materialDisagrees("part", raw, [], outcome.materialName!, input)] : []),
              ...missingReferenceDetails("part", raw, refs, outcome.missingRefs)
            ])
          }
          return yield* settlePatch({ table: "parts", id, root: "part", input: raw, refs }, outcome)
        })),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // refused while child parts point at it (409, parts_parent_part_fkey)
          yield* settleRemove("parts", id, yield* store.remove(tenant.id, id))
        })
    })
  }))
}
