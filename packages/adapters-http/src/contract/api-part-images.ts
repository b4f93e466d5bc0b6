// /api-upload-url and /api-parts-images (spec 4.12; issue 12; docs/DECISIONS.md "Part images and uploads").
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { PartImageCreate, partImageListSpec, PartImagePatch, PartImageWithUrl, UploadUrlRequest } from "@mes/domain"
import { apiErrors, created, crud, okEnvelope } from "./envelope.ts"

export { partImageListSpec }

export class UploadsGroup extends HttpApiGroup.make("uploads").add(
  HttpApiEndpoint.post("create", "/api-upload-url", {
    payload: UploadUrlRequest,
    success: created(okEnvelope(Schema.Struct({
      upload_url: Schema.String,
      method: Schema.Literal("PUT"),
      headers: Schema.Record(Schema.String, Schema.String),
      key: Schema.String,
      max_bytes: Schema.Int,
      expires_at: Schema.String
    }))),
    error: apiErrors
  })
) {}

export class PartImagesGroup extends crud("partImages", "/api-parts-images", {
  singular: "part_image",
  plural: "part_images",
  record: PartImageWithUrl,
  list: partImageListSpec,
  create: PartImageCreate,
  patch: PartImagePatch
}) {}
