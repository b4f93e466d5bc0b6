// What the generated OpenAPI document does not know from the schemas (issue 13 item 4): a summary and description
// on every operation, tag descriptions, servers, the security schemes and which operation takes which, and request
// examples. Applied as the Api's OpenApi.Transform, so /openapi.json and the docs page show the same document;
// `redocly lint` (recommended rules) keeps it complete (test/openapi-lint.test.ts).
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import * as Schema from "effect/Schema"

/** How an endpoint authenticates (spec 5): see server.ts `accessOf`. */
export type Access = "key" | "cron" | "admin" | "keyOrAdmin"

/** Endpoints that do not take an API key alone. */
export const accessOf: Readonly<Record<string, Access>> = {
  "monthlyReset.run": "cron",
  "export.run": "admin",
  "apiKeys.create": "keyOrAdmin",
  "apiKeys.list": "keyOrAdmin",
  "apiKeys.remove": "keyOrAdmin"
}

/** Each group's tag: what its records are. */
const TAGS: Readonly<Record<string, string>> = {
  jobs: "Jobs with their parts and operations: nested create, lists, read, PATCH, soft delete, ERP sync (spec 4.1).",
  parts: "Parts of a job (spec 4.2).",
  operations: "Operations of a part, the work a cell does (spec 4.3).",
  cells: "Work cells (spec 2.9, 4.10).",
  resources: "Tooling, fixtures, molds, materials and equipment (spec 4.12).",
  materials: "The tenant's material catalog (spec 4.12).",
  profiles: "Operators and users (DECISIONS: profiles).",
  substeps: "Checklist steps of an operation (spec 4.8).",
  issues: "Issues and non-conformance reports (spec 4.7).",
  jobLifecycle: "Start, stop, resume and complete a job (spec 3.1).",
  operationLifecycle: "Start, pause, resume and complete an operation, with its time entries (spec 3.2).",
  batches: "Batches of operations run together (spec 4.5).",
  batchLifecycle: "Start and stop a batch, sharing its time across its operations (spec 3.3).",
  timeEntries: "Time recorded against operations (spec 2.8).",
  webhooks: "Webhook subscriptions (spec 4.9, 6).",
  webhookLogs: "Webhook delivery attempts and redelivery (spec 4.9).",
  dashboard: "Counts for a dashboard (spec 4.14).",
  erpSync: "ERP synchronization: diff, sync, the changes feed and status (issue 11).",
  apiKeys: "API keys of the tenant (spec 5).",
  export: "The tenant's data as JSON or CSV, for admins (spec 4.11).",
  monthlyReset: "The monthly reset of parts counts, for cron (spec 4.13).",
  scrapReasons: "Reasons for scrap (issue 12).",
  quantities: "Good, scrap and rework quantities recorded against operations (issue 12).",
  assignments: "Operators assigned to operations, parts, jobs or cells; an operator's work queue (issue 12).",
  templates: "Substep templates and applying them to operations (issue 12).",
  templateItems: "The items of substep templates (issue 12).",
  downtime: "Downtime of cells (issue 12).",
  oee: "Overall equipment effectiveness per day, shift or cell (issue 12).",
  uploads: "Signed upload URLs for part images (issue 12).",
  partImages: "Images attached to parts (issue 12)."
}

/** Summaries of endpoints that are not plain create, read, update, delete and sync. */
const SUMMARIES: Readonly<Record<string, readonly [summary: string, description: string]>> = {
  "jobs.create": ["Create a job with its parts and operations", "One request creates the job, its parts and their operations; cells may be named (`cell_name`). 201 with the nested job and the ids made."],
  "jobLifecycle.start": ["Start a job", "not_started → in_progress; stamps started_at; emits job.started."],
  "jobLifecycle.stop": ["Stop (hold) a job", "in_progress → on_hold; emits job.stopped."],
  "jobLifecycle.resume": ["Resume a job", "on_hold → in_progress; emits job.resumed."],
  "jobLifecycle.complete": ["Complete a job", "→ completed; stamps completed_at and actual_duration; emits job.completed (spec 6.2)."],
  "operationLifecycle.start": ["Start an operation", "Opens a time entry (for `user_id` when given); rolls the part up; emits operation.started."],
  "operationLifecycle.pause": ["Pause an operation", "Closes the running time entries and adds them to actual_time; emits operation.paused."],
  "operationLifecycle.resume": ["Resume an operation", "Opens a time entry again; emits operation.resumed."],
  "operationLifecycle.complete": ["Complete an operation", "Closes running time entries, sets 100 %; rolls the part up; emits operation.completed."],
  "batchLifecycle.start": ["Start a batch", "Starts its operations and opens one time entry per operation."],
  "batchLifecycle.stop": ["Stop a batch", "Completes its operations and shares the tracked time out (spec 3.3)."],
  "batchLifecycle.addOperations": ["Add operations to a batch", "Operations of the tenant, each in one batch at a time."],
  "webhooks.test": ["Send a test delivery", "Delivers a `webhook.test` event to the webhook now and answers the attempt."],
  "webhookLogs.redeliver": ["Redeliver a delivery", "Schedules the logged delivery again with the same body."],
  "dashboard.stats": ["Dashboard counts", "Jobs, parts and operations by status and the open issues, in one statement."],
  "quantities.create": ["Record good, scrap and rework", "Against an operation; scrap needs an active scrap reason. The operation's and part's running totals are sums of these entries."],
  "downtime.create": ["Record downtime of a cell", "Open-ended (no end_time) while it lasts; emits downtime.started (and downtime.ended when closed)."],
  "partImages.create": ["Attach an uploaded image to a part", "The storage_key of an upload of the tenant's (POST /api-upload-url, then PUT the file)."],
  "templates.apply": ["Apply a template to an operation", "Copies the template's items into the operation's substeps, in one statement, with step.added each."],
  "oee.report": ["OEE report", "Availability, performance, quality and OEE by day, shift or cell, with their inputs (docs/DECISIONS.md)."],
  "uploads.create": ["Get a signed upload URL", "A short-lived URL to PUT one image file to (HMAC-signed method, key, content type, size and expiry)."],
  "export.run": ["Export the tenant's data", "JSON (streamed) or CSV of one entity; admins' session tokens only."],
  "monthlyReset.run": ["Run the monthly reset", "Resets every active tenant's monthly parts count; for cron (`x-cron-secret`) or the service key."],
  "erpSync.sync": ["Apply an ERP snapshot", "`{cells, resources, jobs, parts, operations}` upserted by external key in dependency order; one result per record (created, updated, unchanged, skipped or error). Recorded as a run of the source."],
  "erpSync.diff": ["Preview an ERP snapshot", "The same body as sync: what sync would do, record by record with the changed fields; writes nothing."],
  "erpSync.status": ["ERP sync status", "The last sync and the recent runs of each external source, with their counts."],
  "erpSync.changes": ["Changes since a cursor", "Everything that happened on the floor since `since` (every event once, in order), a page at a time; `next_cursor` continues."]
}

/** Singular and plural words of groups that the rule in `nouns` gets wrong. */
const NOUNS: Readonly<Record<string, readonly [singular: string, plural: string]>> = {
  apiKeys: ["API key", "API keys"],
  downtime: ["downtime record", "downtime records"],
  quantities: ["quantity record", "quantity records"]
}

const VERB: Readonly<Record<string, (singular: string, plural: string) => readonly [string, string]>> = {
  list: (s, p) => [`List ${p}, or read one`, `A page of ${p} with filters, sort and pagination; with \`?id=\`, one ${s} (404 unknown, 403 another tenant's).`],
  create: (s) => [`Create ${article(s)}`, `201 with the ${s} as stored. References must be records of the caller's tenant (422 FK_CONSTRAINT).`],
  update: (s) => [`Update ${article(s)}`, `PATCH \`?id=\`: only the fields given change; \`If-Match\` makes it conditional (412).`],
  remove: (s) => [`Delete ${article(s)}`, `DELETE \`?id=\`: \`{id, deleted: true}\`; 409 while other records still reference it.`],
  sync: (s) => [`Upsert ${article(s)} by external key`, `PUT sync by (external_source, external_id): 201 created, 200 updated or unchanged.`],
  bulkSync: (s, p) => [`Upsert up to 1,000 ${p} by external key`, `One result per record (created, updated, unchanged or error); the rest are kept when one fails.`]
}

const words = (name: string) => name.replace(/([A-Z])/g, " $1").toLowerCase().replace(/^\s+/, "")

/** A group's records, singular and plural: `batches` → batch, `resources` → resource, `timeEntries` → time entry. */
const nouns = (group: string): readonly [string, string] => {
  const known = NOUNS[group]
  if (known !== undefined) return known
  const plural = words(group)
  return [plural.replace(/ies$/, "y").replace(/(ch|sh|ss|x)es$/, "$1").replace(/s$/, ""), plural]
}

const article = (noun: string) => /^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`

/**
 * A summary and description for any endpoint: the table's, else one by its verb and group. An endpoint that is
 * neither gets a bare one (its name; "METHOD path"), which test/openapi-lint.test.ts refuses: add it to SUMMARIES.
 */
const describe = (group: string, name: string, method: string, path: string): readonly [string, string] => {
  const known = SUMMARIES[`${group}.${name}`]
  if (known !== undefined) return known
  const [singular, plural] = nouns(group)
  const verb = VERB[name]
  if (verb !== undefined) return verb(singular, plural)
  return [`${words(name)[0]!.toUpperCase()}${words(name).slice(1)} (${plural})`, `${method.toUpperCase()} ${path}`]
}

/** What each error status means; the body is the error envelope `{success: false, error: {code, message, …}}`. */
const ERROR_RESPONSES: Readonly<Record<string, string>> = {
  "400": "BAD_REQUEST: the body is not JSON (or nests too deep), or a header or query parameter is malformed.",
  "401": "UNAUTHORIZED: the credentials are missing or invalid.",
  "402": "QUOTA_EXCEEDED: the tenant holds as many records of the kind as a cloud deployment allows (webhooks); delete one first.",
  "403": "FORBIDDEN: the record or a referenced one belongs to another tenant, or the caller lacks the role.",
  "404": "NOT_FOUND: no such record.",
  "409": "CONFLICT or INVALID_STATE_TRANSITION: the record is still referenced, the transition is not allowed, or a request with the same Idempotency-Key is still running.",
  "412": "PRECONDITION_FAILED: `If-Match` names a version the record no longer has; nothing was written.",
  "422": "VALIDATION_ERROR: `details` names each invalid field (constraint, value); also an Idempotency-Key reused with another request.",
  "429": "RATE_LIMIT_EXCEEDED: the tenant's daily request limit (cloud plans); `Retry-After` says when to try again.",
  "500": "INTERNAL_ERROR: the task failed.",
  "503": "SERVICE_UNAVAILABLE: the database cannot serve the request now (unreachable, read-only, out of resources, or it gave up on the statement) or the request took too long; retry after `Retry-After` seconds."
}

const RETRY_AFTER = { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } }

/** The schemes of the credentials mes takes (spec 5). */
const SECURITY_SCHEMES = {
  apiKey: { type: "http", scheme: "bearer", description: "An API key of the tenant: `Authorization: Bearer svc_live_…` (or `svc_test_…`)." },
  apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key of the tenant in `X-API-Key`." },
  sessionToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A signed-in user's session token (HS256 with MES_JWT_SECRET; `mes token issue`)." },
  cronSecret: { type: "apiKey", in: "header", name: "x-cron-secret", description: "The CRON_SECRET of the deployment (the monthly task)." },
  serviceKey: { type: "http", scheme: "bearer", description: "The SERVICE_ROLE_KEY of the deployment (service-level callers)." }
} as const

const SECURITY: Readonly<Record<Access, ReadonlyArray<Record<string, ReadonlyArray<string>>>>> = {
  key: [{ apiKey: [] }, { apiKeyHeader: [] }],
  admin: [{ sessionToken: [] }],
  keyOrAdmin: [{ apiKey: [] }, { apiKeyHeader: [] }, { sessionToken: [] }],
  cron: [{ cronSecret: [] }, { serviceKey: [] }]
}

/** Request examples, from the README's walk-through. */
const EXAMPLES: Readonly<Record<string, unknown>> = {
  "jobs.create": {
    job_number: "J-1001", customer: "Globex", due_date: "2026-12-15", priority: 2,
    parts: [
      { part_number: "BRACKET", quantity: 40, material: "S355", operations: [{ operation_name: "Laser cut", sequence: 1, cell_name: "Laser 1", estimated_time_minutes: 25 }, { operation_name: "Deburr", sequence: 2 }] },
      { part_number: "FRAME", quantity: 4, parent_part_number: "BRACKET", operations: [{ operation_name: "Weld", sequence: 1 }] }
    ]
  },
  "jobs.sync": { external_id: "SO-77", external_source: "erp", job_number: "J-1002", parts: [{ external_id: "SO-77-1", part_number: "PLATE", quantity: 10 }] },
  "cells.create": { name: "Laser 1" },
  "profiles.create": { display_name: "Olga" },
  "quantities.create": { operation_id: "0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6a", good: 8, scrap: 1, scrap_reason_id: "0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6b" },
  "uploads.create": { content_type: "image/jpeg" },
  "apiKeys.create": { name: "ERP", environment: "live" },
  "webhooks.create": { url: "https://erp.example.com/mes-hook", events: ["job.completed", "ncr.created"] },
  "partImages.create": { part_id: "0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6c", storage_key: "0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b00/0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6d.jpg", caption: "Weld seam" },
  "monthlyReset.run": {}
}

/** `{anyOf: [x]}` is `x` (the schema generator writes one-member unions for single literals). */
const flattenSingleAnyOf = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(flattenSingleAnyOf)
  if (node === null || typeof node !== "object") return node
  const o = node as Record<string, unknown>
  if (Array.isArray(o.anyOf) && o.anyOf.length === 1 && Object.keys(o).length === 1) return flattenSingleAnyOf(o.anyOf[0])
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, flattenSingleAnyOf(v)]))
}

/**
 * The numeric query parameters of the API's endpoints as their decoded type says them (`type: integer` with the
 * bounds of the schema), by `operationId name`. The generator describes a query parameter by its text encoding,
 * which for a number is a string pattern that allows "+5", "5.0" and "1e2" (refused by the server, which takes
 * `-?digits`) and has no bounds; in OpenAPI a parameter's schema is the value its text stands for.
 */
const numericQueryParameters = <G extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<string, G>): ReadonlyMap<string, Record<string, unknown>> => {
  const out = new Map<string, Record<string, unknown>>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      if (endpoint.query === undefined) return
      const properties = (Schema.toJsonSchemaDocument(Schema.toType(endpoint.query)).schema.properties ?? {}) as Record<string, Record<string, unknown>>
      for (const [name, schema] of Object.entries(properties)) {
        if (schema.type === "integer" || schema.type === "number") out.set(`${group.identifier}.${endpoint.identifier} ${name}`, schema)
      }
    }
  })
  return out
}

/** The transform of the document generated from `api` (OpenApi.Transform); both /openapi.json and the MCP tools read it. */
export const documentOpenApi = <G extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<string, G>) => (spec: Record<string, any>): Record<string, any> => {
  const out = flattenSingleAnyOf(spec) as Record<string, any>
  const numeric = numericQueryParameters(api)
  // relative: the deployment that serves the document (redocly's recommended rules warn on a localhost server)
  out.servers = [{ url: "/", description: "The server this document came from (paths carry /functions/v1; `mes serve` listens on 8787)" }]
  out.components = { ...out.components, securitySchemes: SECURITY_SCHEMES }
  out.tags = (out.tags ?? []).map((t: { name: string }) => ({ ...t, description: TAGS[t.name] ?? `Endpoints of ${words(t.name)}.` }))
  for (const [path, item] of Object.entries(out.paths ?? {}) as Array<[string, Record<string, any>]>) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== "object" || op === null || typeof op.operationId !== "string") continue
      const [group, name] = op.operationId.split(".") as [string, string]
      const [summary, description] = describe(group, name, method, path)
      op.summary ??= summary
      op.description ??= description
      op.security = SECURITY[accessOf[op.operationId] ?? "key"]
      for (const parameter of op.parameters ?? []) {
        const schema = parameter.in === "query" ? numeric.get(`${op.operationId} ${parameter.name}`) : undefined
        if (schema !== undefined) parameter.schema = schema
      }
      for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Record<string, any>]>) {
        const meaning = ERROR_RESPONSES[status]
        if (meaning === undefined) continue
        response.description = meaning
        if (status === "429" || status === "503") response.headers = { ...response.headers, "Retry-After": RETRY_AFTER }
      }
      const example = EXAMPLES[op.operationId]
      const json = op.requestBody?.content?.["application/json"]
      if (example !== undefined && json !== undefined) json.example = example
    }
  }
  return out
}
