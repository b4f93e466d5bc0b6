// /api-upload-url and /api-parts-images (issue 12): signed upload URLs for the local-disk storage, and images
// attached to parts, each answered with a signed URL to GET its file.
import * as Effect from "effect/Effect"
import { CurrentTenant, type PartImage, PartImages, UploadUrlRequest, decodeInput, detail, failIfAny, jsonText, requireId } from "@mes/domain"
import { type ApiRequest, ok } from "../server.ts"
import type { LocalDiskStorage } from "../storage/local-disk.ts"
import { resourceHandlers } from "./shared.ts"

const decodeUploadRequest = decodeInput(UploadUrlRequest, "upload")

export const partImageHandlersOf = (files: LocalDiskStorage) =>
  Effect.gen(function*() {
    const images = yield* PartImages
    const withUrl = (image: PartImage) => ({ ...image, ...files.downloadUrl(image.storage_key) })
    const handlers = resourceHandlers("partImages", { singular: "part_image", plural: "part_images" }, {
      list: (query) =>
        images.list(query).pipe(Effect.map((page) => ({ ...page, rows: jsonText(JSON.stringify(page.rows.parse().map(withUrl))) }))),
      get: (id) => images.get(id).pipe(Effect.map((record) => withUrl(record.parse()))),
      create: (input) => images.create(input).pipe(Effect.map(withUrl)),
      update: (id, input) => images.update(id, input).pipe(Effect.map((record) => withUrl(record.parse()))),
      remove: images.remove
    })
    return {
      "uploads.create": ({ body }: ApiRequest) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeUploadRequest(body)
          if (input.size_bytes !== undefined && input.size_bytes > files.maxBytes) {
            yield* failIfAny("upload", [detail("upload", body, ["size_bytes"], "MAX_VALUE", `uploads are at most ${files.maxBytes} bytes`)])
          }
          const maxBytes = input.size_bytes ?? files.maxBytes
          const { expires_at, key, url } = files.uploadUrl(tenant.id, input.content_type, maxBytes)
          return ok({
            upload_url: url,
            method: "PUT",
            headers: { "content-type": input.content_type },
            key,
            max_bytes: maxBytes,
            expires_at
          }, 201)
        }),
      // the records as the database wrote them, each with a URL to its file (signed here, so parsed here)
      ...handlers,
      // a read of one: its ETag (and so If-Match) covers the record, not the URL signed anew on every read
      "partImages.list": (request: ApiRequest) =>
        request.query.id === undefined
          ? handlers["partImages.list"]!(request)
          : requireId(request.query).pipe(
            Effect.flatMap(images.get),
            Effect.map((record) => ({ ...ok({ part_image: withUrl(record.parse()) }), version: { part_image: record } }))
          )
    }
  })
