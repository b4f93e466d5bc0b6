// The API definition (spec section 4, DECISIONS): paths, queries, bodies and envelopes. The OpenAPI
// document, the docs page and the typed client are generated from it; the server routes by it.
import * as Schema from "effect/Schema"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BatchesGroup, BatchLifecycleGroup, TimeEntriesGroup } from "./api-batches.ts"
import { JobLifecycleGroup, OperationLifecycleGroup } from "./api-lifecycle.ts"
import {
  batchListSpec,
  Cell,
  CellCreate,
  cellListSpec,
  CellPatch,
  CellSync,
  Material,
  MaterialCreate,
  materialListSpec,
  MaterialPatch,
  Resource,
  ResourceCreate,
  resourceListSpec,
  ResourcePatch,
  ResourceSync,
  DashboardStats,
  issueListSpec,
  Job,
  JobCreate,
  jobListSpec,
  JobPatch,
  JobSync,
  Operation,
  OperationCreate,
  operationListSpec,
  OperationPatch,
  OperationSync,
  Part,
  PartCreate,
  partListSpec,
  PartPatch,
  PartSync,
  Profile,
  ProfileCreate,
  profileListSpec,
  ProfilePatch,
  QuantityTotals,
  timeEntryListSpec
} from "@mes/domain"
import {
  apiErrors,
  created,
  crud,
  listQuery,
  okEnvelope
} from "./envelope.ts"
import { IssuesGroup } from "./api-issues.ts"
import { apiKeyListSpec, ApiKeysGroup, ErpSyncGroup, ExportGroup, MonthlyResetGroup } from "./api-admin.ts"
import { substepListSpec, SubstepsGroup } from "./api-substeps.ts"
import {
  assignmentListSpec,
  AssignmentsGroup,
  downtimeListSpec,
  DowntimeGroup,
  OeeGroup,
  QuantitiesGroup,
  quantityListSpec,
  scrapReasonListSpec,
  ScrapReasonsGroup,
  templateItemListSpec,
  TemplateItemsGroup,
  templateListSpec,
  TemplatesGroup
} from "./api-shop-floor.ts"
import { partImageListSpec, PartImagesGroup, UploadsGroup } from "./api-part-images.ts"
import { documentOpenApi } from "./openapi.ts"
import { webhookListSpec, webhookLogListSpec, WebhookLogsGroup, WebhooksGroup } from "./api-webhooks.ts"

export const BASE_PATH = "/functions/v1"

// the error classes of the definition, for clients (packages/client) that catch them by class
export {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PreconditionFailedError,
  QuotaExceededError,
  RateLimitError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError
} from "./envelope.ts"
export { ResetFailedError } from "./api-admin.ts"


const SyncResult = okEnvelope(Schema.Struct({ action: Schema.Literals(["created", "updated", "unchanged"]), id: Schema.String, external_id: Schema.String }))
const BulkSyncResult = okEnvelope(Schema.Struct({
  total: Schema.Int,
  created: Schema.Int,
  updated: Schema.Int,
  unchanged: Schema.Int,
  errors: Schema.Int,
  results: Schema.Array(Schema.Struct({
    external_id: Schema.NullOr(Schema.String),
    id: Schema.optionalKey(Schema.String),
    action: Schema.Literals(["created", "updated", "unchanged", "error"]),
    error: Schema.optionalKey(Schema.String)
  }))
}))

const WithParts = <F extends Schema.Struct.Fields, C extends Schema.Top>(record: Schema.Struct<F>, child: C) =>
  Schema.Struct({ ...record.fields, parts: Schema.Array(child) })

/** A job read by id: its parts with their operations (also the RPC group's GetJob answer). */
export const JobDetail = WithParts(Job, Schema.Struct({ ...Part.fields, operations: Schema.Array(Operation) }))
export const JobWithParts = WithParts(Job, Part)
export const JobCreated = okEnvelope(Schema.Struct({
  job: JobDetail,
  job_id: Schema.String,
  job_number: Schema.String,
  parts: Schema.Array(Schema.Struct({
    part_id: Schema.String,
    part_number: Schema.String,
    operations: Schema.Array(Schema.Struct({ operation_id: Schema.String, operation_name: Schema.String }))
  }))
}))

const syncEndpoints = <const P extends `/${string}`>(path: P, record: Schema.Top, bulkKeys: ReadonlyArray<string>) => [
  HttpApiEndpoint.put("sync", `${path}/sync`, { payload: record as Schema.Codec<unknown, unknown>, success: [SyncResult, created(SyncResult)], error: apiErrors }),
  HttpApiEndpoint.post("bulkSync", `${path}/bulk-sync`, {
    payload: Schema.Struct(Object.fromEntries(bulkKeys.map((k) => [k, Schema.optionalKey(Schema.Array(record))]))) as unknown as Schema.Codec<unknown, unknown>,
    success: BulkSyncResult,
    error: apiErrors
  })
] as const

export class JobsGroup extends crud("jobs", "/api-jobs", {
  singular: "job",
  plural: "jobs",
  record: Job,
  listRecord: JobWithParts,
  readRecord: JobDetail,
  list: jobListSpec,
  create: JobCreate,
  createdSuccess: JobCreated,
  patch: JobPatch
}).add(...syncEndpoints("/api-jobs", JobSync, ["items", "jobs"])) {}

export class PartsGroup extends crud("parts", "/api-parts", {
  singular: "part",
  plural: "parts",
  record: Part,
  readRecord: Schema.Struct({ ...Part.fields, quantities: QuantityTotals }),
  list: partListSpec,
  create: PartCreate,
  patch: PartPatch
}).add(...syncEndpoints("/api-parts", PartSync, ["parts", "items"])) {}

export class OperationsGroup extends crud("operations", "/api-operations", {
  singular: "operation",
  plural: "operations",
  record: Operation,
  readRecord: Schema.Struct({ ...Operation.fields, quantities: QuantityTotals }),
  list: operationListSpec,
  create: OperationCreate,
  patch: OperationPatch
}).add(...syncEndpoints("/api-operations", OperationSync, ["operations", "items"])) {}

export class CellsGroup extends crud("cells", "/api-cells", {
  singular: "cell",
  plural: "cells",
  record: Cell,
  list: cellListSpec,
  create: CellCreate,
  patch: CellPatch
}).add(...syncEndpoints("/api-cells", CellSync, ["cells", "items"])) {}

export class MaterialsGroup extends crud("materials", "/api-materials", {
  singular: "material",
  plural: "materials",
  record: Material,
  list: materialListSpec,
  create: MaterialCreate,
  patch: MaterialPatch
}) {}

export class ResourcesGroup extends crud("resources", "/api-resources", {
  singular: "resource",
  plural: "resources",
  record: Resource,
  list: resourceListSpec,
  create: ResourceCreate,
  patch: ResourcePatch
}).add(...syncEndpoints("/api-resources", ResourceSync, ["resources", "items"])) {}

export class ProfilesGroup extends crud("profiles", "/api-profiles", {
  singular: "profile",
  plural: "profiles",
  record: Profile,
  list: profileListSpec,
  create: ProfileCreate,
  patch: ProfilePatch
}) {}


/** GET /api-dashboard-stats: what get_dashboard_stats (spec 4.14) answers, in one statement. */
export class DashboardGroup extends HttpApiGroup.make("dashboard").add(
  HttpApiEndpoint.get("stats", "/api-dashboard-stats", { success: okEnvelope(DashboardStats), error: apiErrors })
) {}

/** The groups and their endpoints; `Api` is this with the document's annotations. */
const definition = HttpApi.make("mes")
  .add(JobsGroup, PartsGroup, OperationsGroup, CellsGroup, ResourcesGroup, MaterialsGroup, ProfilesGroup, SubstepsGroup, IssuesGroup)
  .add(JobLifecycleGroup, OperationLifecycleGroup, BatchesGroup, BatchLifecycleGroup, TimeEntriesGroup)
  .add(WebhooksGroup, WebhookLogsGroup, DashboardGroup)
  .add(ScrapReasonsGroup, QuantitiesGroup, AssignmentsGroup, TemplatesGroup, TemplateItemsGroup, DowntimeGroup, OeeGroup)
  .add(UploadsGroup, PartImagesGroup)
  .add(ErpSyncGroup, ApiKeysGroup, ExportGroup, MonthlyResetGroup)
  .prefix(BASE_PATH)

export class Api extends definition
  .annotate(OpenApi.Transform, documentOpenApi(definition))
  .annotateMerge(OpenApi.annotations({
    title: "mes: manufacturing execution service",
    version: "1.0.0",
    description: [
      "REST API of mes. Authenticate with `Authorization: Bearer svc_live_...` or `X-API-Key`.",
      "The export takes a signed-in admin's session token (`Authorization: Bearer <JWT>`, HS256), key management",
      "an API key or an admin's token, the monthly reset task `x-cron-secret` or `Authorization: Bearer <SERVICE_ROLE_KEY>`.",
      "",
      "Cloud plans (MES_DEPLOYMENT=cloud) limit requests per tenant per UTC day (free 100, pro 1,000, premium 10,000):",
      "responses carry `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, `RateLimit-Policy` and",
      "`RateLimit`; past the limit every endpoint answers 429 RATE_LIMIT_EXCEEDED with `Retry-After`.",
      "",
      "Safe retries: send `Idempotency-Key: <unique value>` with any POST, PUT or PATCH (lifecycle actions",
      "included). The same key with the same request replays the first answer with `Idempotent-Replayed: true`;",
      "with another request it is 422; while the first still runs it is 409. Keys are kept 24 h (MES_IDEMPOTENCY_TTL).",
      "",
      "Versions: `GET ?id=` answers an `ETag`; a PATCH with `If-Match: <etag>` is 412 PRECONDITION_FAILED when",
      "the record changed since, and nothing is written. Without If-Match, PATCH does not check.",
      "",
      "503 SERVICE_UNAVAILABLE with `Retry-After` when the database cannot serve the request now (unreachable,",
      "read-only, out of resources, or it gave up on the statement) or a request outlives MES_REQUEST_TIMEOUT.",
      "Probes: `GET /functions/v1/health` (live) and `GET /functions/v1/ready` (database and migrations)."
    ].join("\n")
  })) {}

/** Every endpoint as (group, name, method, path), in definition order. */
export const endpoints = (): Array<{ group: string; name: string; method: string; path: string }> => {
  const out: Array<{ group: string; name: string; method: string; path: string }> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) =>
      out.push({ group: group.identifier, name: endpoint.identifier, method: endpoint.method, path: endpoint.path })
  })
  return out
}

/** The list spec behind each list endpoint, so malformed queries are refused before authentication. */
export const listSpecs: Readonly<Record<string, Parameters<typeof listQuery>[0]>> = {
  "jobs.list": jobListSpec,
  "parts.list": partListSpec,
  "operations.list": operationListSpec,
  "cells.list": cellListSpec,
  "resources.list": resourceListSpec,
  "materials.list": materialListSpec,
  "profiles.list": profileListSpec,
  "issues.list": issueListSpec,
  "substeps.list": substepListSpec,
  "batches.list": batchListSpec,
  "timeEntries.list": timeEntryListSpec,
  "webhooks.list": webhookListSpec,
  "webhookLogs.list": webhookLogListSpec,
  "apiKeys.list": apiKeyListSpec,
  "scrapReasons.list": scrapReasonListSpec,
  "quantities.list": quantityListSpec,
  "assignments.list": assignmentListSpec,
  "templates.list": templateListSpec,
  "templateItems.list": templateItemListSpec,
  "downtime.list": downtimeListSpec,
  "partImages.list": partImageListSpec
}
