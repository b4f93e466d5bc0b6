// Part images (spec 4.12; issue 12): files uploaded through signed URLs (the storage port) attached to parts.
// Shapes and choices: docs/DECISIONS.md "Part images and uploads".
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Crud, type CrudStore, makeCrud, type RemoveOutcome, settleRemove } from "../crud.ts"
import type { Conflict } from "../errors.ts"
import { Name255, opt, optNull, PositiveInt, tenantRecord, Uuid } from "../fields.ts"
import { CurrentTenant, References } from "../ports.ts"
import { bool, type ListSpec, uuid } from "../query.ts"
import { checkReferences } from "../references.ts"
import { decodeInput, detail, failIfAny } from "../validation.ts"

/** The image types an upload URL is issued for (and the file's first bytes must match). */
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp", "image/gif"] as const
export const ImageType = Schema.Literals(IMAGE_TYPES)
export type ImageType = typeof ImageType.Type

/** A stored file: what the storage knows of it. */
export interface StoredFile {
  readonly size: number
  readonly contentType: ImageType
}

/** Where uploaded files live (a local directory by default). Keys are `<tenant id>/<uuid>.<ext>`, made by mes. */
export class Storage extends Context.Service<Storage, {
  /**
   * The file under `key` as it is now, kept as the one its image shows (an attachment takes it): a later PUT to its
   * upload URL is refused and cannot change it. Undefined when there is none.
   */
  readonly seal: (key: string) => Effect.Effect<StoredFile | undefined>
  /** Removes the file under `key` (nothing when there is none). */
  readonly remove: (key: string) => Effect.Effect<void>
}>()("mes/domain/Storage") {}

/** The storage key of a new upload of the tenant: `<tenant>/<uuid>.<ext>`. */
export const storageKey = (tenantId: string, id: string, type: ImageType) =>
  `${tenantId}/${id}.${type === "image/jpeg" ? "jpg" : type.slice("image/".length)}`

/** The content type a key was issued for (its extension), when it is a key mes makes. */
export const typeOfKey = (key: string): ImageType | undefined => {
  const m = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(jpg|png|webp|gif)$/.exec(key)
  return m === null ? undefined : m[1] === "jpg" ? "image/jpeg" : (`image/${m[1]}` as ImageType)
}

export const UploadUrlRequest = Schema.Struct({
  content_type: ImageType,
  file_name: opt(Name255),
  size_bytes: opt(PositiveInt)
})
export type UploadUrlRequest = typeof UploadUrlRequest.Type

export const PartImageCreate = Schema.Struct({
  part_id: Uuid,
  /** The `key` POST /api-upload-url answered, once the file is uploaded. */
  storage_key: Name255,
  file_name: optNull(Name255),
  caption: optNull(Schema.String),
  is_primary: opt(Schema.Boolean)
})
/** What a create stores: the client's fields and what the storage says of the file. */
const PartImageInsert = Schema.Struct({ ...PartImageCreate.fields, content_type: ImageType, size_bytes: Schema.Int })

export const PartImagePatch = Schema.Struct({ file_name: optNull(Name255), caption: optNull(Schema.String), is_primary: opt(Schema.Boolean) })
export const partImageListSpec = {
  filters: { id: uuid, part_id: uuid, is_primary: bool },
  sort: ["created_at", "is_primary"],
  defaultSort: "created_at",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>
export const PartImage = tenantRecord({
  part_id: Uuid,
  storage_key: Schema.String,
  file_name: Schema.NullOr(Schema.String),
  content_type: ImageType,
  size_bytes: Schema.Int,
  caption: Schema.NullOr(Schema.String),
  is_primary: Schema.Boolean
})
export type PartImage = typeof PartImage.Type
/** A part image as the API answers it: with a signed URL to GET the file (added by the HTTP adapter). */
export const PartImageWithUrl = Schema.Struct({ ...PartImage.fields, url: Schema.String, url_expires_at: Schema.String })

export class PartImageStore extends Context.Service<PartImageStore, CrudStore<PartImage> & {
  /** Deletes a live image of the tenant as one statement, with the owner of the id and the deleted image's storage key. */
  readonly removeWithKey: (tenantId: string, id: string) => Effect.Effect<RemoveOutcome & { readonly storageKey: string | undefined }, Conflict>
}>()("mes/domain/PartImageStore") {}

const ENTITY = "part_image"

/**
 * Attaching checks that the key is an upload of the caller's tenant that arrived (422 FK_CONSTRAINT otherwise)
 * and takes the file's type and size from the storage; a part's first image is its primary one, and making
 * another primary unsets the previous in the same statement. Deleting an image removes its file after the row.
 */
export class PartImages extends Context.Service<PartImages, Crud<PartImage>>()("mes/domain/PartImages") {
  static readonly layer = Layer.effect(PartImages, Effect.gen(function*() {
    const store = yield* PartImageStore
    const storage = yield* Storage
    const decode = decodeInput(PartImageCreate, ENTITY, { record: PartImage })
    const withRefs = Effect.provideService(References, yield* References)
    const crud = makeCrud<PartImage>({
      entity: ENTITY,
      table: "part_images",
      create: PartImageInsert,
      record: PartImage,
      patch: PartImagePatch,
      listSpec: partImageListSpec,
      refs: (input: { part_id?: string }) => (input.part_id === undefined ? [] : [{ table: "parts", id: input.part_id, path: ["part_id"] }]),
      unique: "storage_key",
      store,
      references: yield* References
    })
    return PartImages.of({
      ...crud,
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decode(raw)
          const key = input.storage_key
          const file = typeOfKey(key) !== undefined && key.startsWith(`${tenant.id}/`) ? yield* storage.seal(key) : undefined
          if (file === undefined) {
            // every reason at once: the part is checked too
            const parts = yield* checkReferences(ENTITY, raw, [{ table: "parts", id: input.part_id, path: ["part_id"] }]).pipe(withRefs)
            yield* failIfAny(ENTITY, [
              ...parts,
              detail(ENTITY, raw, ["storage_key"], "FK_CONSTRAINT", `no uploaded file ${key} in this tenant (upload it to the URL of POST /api-upload-url first)`)
            ])
          }
          return yield* crud.create({ ...(raw as object), content_type: file!.contentType, size_bytes: file!.size })
        }),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const outcome = yield* store.removeWithKey(tenant.id, id)
          yield* settleRemove("part_images", id, outcome)
          // the row is gone (committed): the file goes too; a crash in between leaves only an unreferenced file
          if (outcome.storageKey !== undefined) yield* storage.remove(outcome.storageKey)
        })
    })
  }))
}
