// Running a service (issue 10): the monthly reset task (spec 4.13), the admin export (spec 4.11) and
// API-key management (spec 4.12 /api-key-generate); each authenticates its own way (server.ts `access`).
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { ApiKey, ApiKeyCreate, apiKeyListSpec, CellSync, EXPORT_ENTITIES, JobSync, OperationSync, PartSync, ResourceSync } from "@mes/domain"
import {
  apiErrors,
  BadRequestError,
  created,
  idQuery,
  listQuery,
  many,
  okEnvelope,
  one,
  UnauthorizedError
} from "./envelope.ts"

export { apiKeyListSpec }

/** spec 4.13: the whole reset failed (each tenant's own failure is reported in `reset_details` instead). */
export class ResetFailedError extends Schema.Class<ResetFailedError>("ResetFailedError")({
  success: Schema.Literal(false),
  error: Schema.Struct({ code: Schema.Literal("INTERNAL_ERROR"), message: Schema.String, timestamp: Schema.String, statusCode: Schema.Int })
}, { httpApiStatus: 500 }) {}

const ResetReport = okEnvelope(Schema.Struct({
  summary: Schema.Struct({
    total_tenants_reset: Schema.Int,
    total_parts_reset: Schema.Int,
    successful_resets: Schema.Int,
    failed_resets: Schema.Int,
    duration_ms: Schema.Int,
    reset_timestamp: Schema.String
  }),
  reset_details: Schema.Array(Schema.Struct({ tenant_id: Schema.String, previous_count: Schema.Int, reset_successful: Schema.Boolean })),
  message: Schema.String
}))

export class MonthlyResetGroup extends HttpApiGroup.make("monthlyReset").add(
  HttpApiEndpoint.post("run", "/monthly-reset-cron", {
    payload: Schema.Struct({}),
    success: ResetReport,
    error: [BadRequestError, UnauthorizedError, ResetFailedError]
  })
) {}

const entityNames = Object.keys(EXPORT_ENTITIES)

export class ExportGroup extends HttpApiGroup.make("export").add(
  HttpApiEndpoint.get("run", "/api-export", {
    query: {
      entities: Schema.String.annotate({ description: `Comma-separated, or \`all\`: ${entityNames.join(", ")}` }),
      format: Schema.optionalKey(Schema.Literals(["json", "csv"]))
    },
    success: okEnvelope(Schema.Struct(Object.fromEntries(entityNames.map((e) => [e, Schema.optionalKey(Schema.Array(Schema.Unknown))])))),
    error: apiErrors
  })
) {}

/** GET /api-erp-sync/changes: the shop floor's changes for the ERP, from the event log (issue 11). */
const RecordResult = Schema.Struct({
  external_id: Schema.NullOr(Schema.String),
  id: Schema.optionalKey(Schema.String),
  action: Schema.Literals(["created", "updated", "unchanged", "skipped", "error"]),
  changed_fields: Schema.optionalKey(Schema.Array(Schema.String)),
  error: Schema.optionalKey(Schema.String)
})

/** Record lists per kind (each as its own sync endpoint takes them) and the mode; ≤ 1,000 records in all. */
const ErpSyncBody = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["upsert", "create_only", "update_only"])),
  cells: Schema.optionalKey(Schema.Array(CellSync)),
  resources: Schema.optionalKey(Schema.Array(ResourceSync)),
  jobs: Schema.optionalKey(Schema.Array(JobSync)),
  parts: Schema.optionalKey(Schema.Array(PartSync)),
  operations: Schema.optionalKey(Schema.Array(OperationSync))
})

const ErpSyncReport = okEnvelope(Schema.Struct({
  mode: Schema.Literals(["upsert", "create_only", "update_only"]),
  dry_run: Schema.Boolean,
  total: Schema.Int,
  created: Schema.Int,
  updated: Schema.Int,
  unchanged: Schema.Int,
  skipped: Schema.Int,
  errors: Schema.Int,
  results: Schema.Struct({
    cells: Schema.Array(RecordResult),
    resources: Schema.Array(RecordResult),
    jobs: Schema.Array(RecordResult),
    parts: Schema.Array(RecordResult),
    operations: Schema.Array(RecordResult)
  })
}))

export class ErpSyncGroup extends HttpApiGroup.make("erpSync").add(
  HttpApiEndpoint.post("sync", "/api-erp-sync/sync", { payload: ErpSyncBody as Schema.Codec<unknown, unknown>, success: ErpSyncReport, error: apiErrors }),
  HttpApiEndpoint.post("diff", "/api-erp-sync/diff", { payload: ErpSyncBody as Schema.Codec<unknown, unknown>, success: ErpSyncReport, error: apiErrors }),
  HttpApiEndpoint.get("status", "/api-erp-sync/status", {
    success: okEnvelope(Schema.Struct({
      sources: Schema.Array(Schema.Struct({
        external_source: Schema.String,
        last_sync_at: Schema.String,
        runs: Schema.Array(Schema.Struct({
          kind: Schema.String,
          ran_at: Schema.String,
          total: Schema.Int,
          created: Schema.Int,
          updated: Schema.Int,
          unchanged: Schema.Int,
          skipped: Schema.Int,
          errors: Schema.Int
        }))
      }))
    })),
    error: apiErrors
  }),
  HttpApiEndpoint.get("changes", "/api-erp-sync/changes", {
    query: {
      since: Schema.optionalKey(Schema.String.annotate({ description: "next_cursor of the previous page; none starts at the beginning" })),
      limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
      types: Schema.optionalKey(Schema.String.annotate({ description: "comma-separated event types (docs/events.md); none = all" }))
    },
    success: okEnvelope(Schema.Struct({
      changes: Schema.Array(Schema.Struct({
        cursor: Schema.String,
        event_id: Schema.String,
        event_type: Schema.String,
        occurred_at: Schema.String,
        data: Schema.Unknown
      })),
      next_cursor: Schema.String,
      has_more: Schema.Boolean
    })),
    error: apiErrors
  })
) {}

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys").add(
  HttpApiEndpoint.post("create", "/api-key-generate", {
    payload: ApiKeyCreate,
    success: created(okEnvelope(Schema.Struct({ api_key: Schema.String, key: ApiKey }))),
    error: apiErrors
  }),
  HttpApiEndpoint.get("list", "/api-key-generate", { query: listQuery(apiKeyListSpec), success: many("api_keys", ApiKey), error: apiErrors }),
  HttpApiEndpoint.delete("remove", "/api-key-generate", { query: idQuery, success: one("api_key", ApiKey), error: apiErrors })
) {}

