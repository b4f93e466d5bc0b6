// The MCP tools (spec 4.14, DECISIONS: REST field names as arguments). Each tool is one REST call; its input
// schema comes from the OpenAPI document of the API definition (the same Effect schemas as the REST
// contract), with a description added to every field that has none.
import { OpenApi } from "effect/http-api"
import { Api, BASE_PATH } from "@mes/adapters-http"
import { issueAliases, jobAliases, operationPatchAliases } from "@mes/domain"
import type { RestRequest } from "./backend.ts"
import type { Toolset } from "./toolsets.ts"

export type JsonSchema = Record<string, any>

export { TOOLSETS, type Toolset } from "./toolsets.ts"

export interface ToolSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly toolset: Toolset
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly inputSchema: JsonSchema
  /** Other names REST takes for some of its arguments (DECISIONS: aliases), accepted beside the schema's own. */
  readonly aliases?: ReadonlyArray<string>
  readonly outputSchema: JsonSchema
  /** The REST call for the arguments. */
  readonly request: (args: Record<string, unknown>) => RestRequest
  /** The one-line message and the structured result of a successful answer's `data`. */
  readonly result: (data: any, args: Record<string, unknown>) => { readonly message: string; readonly value: Record<string, unknown> }
}

type Operation = { parameters?: Array<{ name: string; in: string; schema: JsonSchema }>; requestBody?: { content: Record<string, { schema: JsonSchema }> } }

const document = () => OpenApi.fromApi(Api) as unknown as { paths: Record<string, Record<string, Operation>> }

const words = (name: string) => name.replace(/_/g, " ")

/** A short description of a field from its name and schema, for fields the contract does not describe. */
const describe = (name: string, schema: JsonSchema, filter: boolean): string => {
  const branch = (schema.anyOf as Array<JsonSchema> | undefined)?.find((s) => s.type !== "null") ?? schema
  const what = filter ? `Filter: ${words(name)}` : words(name)[0]!.toUpperCase() + words(name).slice(1)
  if (branch.enum !== undefined) return `${what}, one of ${branch.enum.join(", ")}`
  if (branch.format === "uuid") return `${what} (UUID)`
  if (name === "limit") return "Page size, 1-1000 (default 100)"
  if (name === "offset") return "Records to skip (default 0)"
  if (name === "search") return "Text search"
  if (branch.type === "array") return `${what} (list)`
  return what
}

/** `format: uuid` says what the long UUID pattern says: drop the pattern, everywhere (tools/list stays small). */
const lean = (schema: unknown): any => {
  if (Array.isArray(schema)) return schema.map(lean)
  if (schema === null || typeof schema !== "object") return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === "pattern" && (schema as JsonSchema).format === "uuid") continue
    out[k] = lean(v)
  }
  return out
}

const described = (properties: Record<string, JsonSchema>, filter: boolean): Record<string, JsonSchema> =>
  Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, lean(s.description === undefined ? { ...s, description: describe(name, s, filter) } : s)]))

const ID = { type: "string", format: "uuid", description: "Id of the record acted on" }

/** The query parameters of a list endpoint as an input schema (without `id` and the sort aliases). */
const listInput = (doc: ReturnType<typeof document>, path: string, omit: ReadonlyArray<string> = []): JsonSchema => {
  const params = (doc.paths[BASE_PATH + path]!.get!.parameters ?? [])
    .filter((p) => p.in === "query" && !["id", "sort_by", "sort_order", ...omit].includes(p.name))
  return { type: "object", properties: described(Object.fromEntries(params.map((p) => [p.name, p.schema])), true), additionalProperties: false }
}

/** The body of a create or PATCH endpoint as an input schema; PATCH tools also take `id`. */
const bodyInput = (
  doc: ReturnType<typeof document>,
  path: string,
  method: "post" | "patch",
  extra: Record<string, JsonSchema> = {},
  omit: ReadonlyArray<string> = [],
  alsoRequired: ReadonlyArray<string> = []
): JsonSchema => {
  const schema = doc.paths[BASE_PATH + path]![method]!.requestBody!.content["application/json"]!.schema
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).filter(([k]) => !omit.includes(k)))
  const required = ((schema.required as Array<string> | undefined) ?? []).filter((k) => !omit.includes(k))
  return {
    ...schema,
    properties: { ...extra, ...described(properties as Record<string, JsonSchema>, false) },
    required: [...Object.keys(extra).filter((k) => k === "id"), ...required, ...alsoRequired]
  }
}

const idOnly = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: "object",
  properties: { id: ID, ...extra },
  required: ["id"],
  additionalProperties: false
})

const strings = (args: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)]))

const withoutId = (args: Record<string, unknown>) => {
  const { id: _id, ...rest } = args
  return rest
}

const RECORD_OUTPUT: JsonSchema = { type: "object", additionalProperties: true }

const listOutput = (plural: string): JsonSchema => ({
  type: "object",
  properties: {
    [plural]: { type: "array", items: { type: "object", additionalProperties: true } },
    total: { type: "integer" },
    limit: { type: "integer" },
    offset: { type: "integer" },
    next_offset: { type: "integer", description: "Pass as offset for the next page; absent on the last page" }
  },
  required: [plural, "total", "limit", "offset"]
})

const pick = (row: Record<string, unknown>, fields: ReadonlyArray<string>) =>
  Object.fromEntries(fields.filter((f) => f in row).map((f) => [f, row[f]]))

/** A compact page: the fields an assistant needs, and how to get the next page. */
const page = (plural: string, noun: string, fields: ReadonlyArray<string>, shape: (row: any) => Record<string, unknown> = (r) => r) =>
(data: any) => {
  const rows = (data[plural] as Array<Record<string, unknown>>).map((r) => pick(shape(r), fields))
  const { limit, offset, total } = data.pagination as { limit: number; offset: number; total: number }
  const next = offset + rows.length < total ? offset + rows.length : undefined
  return {
    message: `${rows.length} of ${total} ${noun}${total === 1 ? "" : "s"}` +
      (rows.length > 0 ? ` (${offset + 1}-${offset + rows.length})` : "") +
      (next === undefined ? "" : `; next page: offset=${next}`),
    value: { [plural]: rows, total, limit, offset, ...(next === undefined ? {} : { next_offset: next }) }
  }
}

const JOB_FIELDS = ["id", "job_number", "customer", "status", "priority", "due_date", "parts"]
const PART_FIELDS = ["id", "job_id", "part_number", "quantity", "material", "status"]
const TASK_FIELDS = ["id", "part_id", "operation_name", "sequence", "status", "cell_id", "assigned_operator_id", "completion_percentage", "actual_time"]
const ISSUE_FIELDS = ["id", "title", "severity", "status", "issue_type", "ncr_number", "operation_id", "created_at"]

const jobAction = (action: "start" | "stop" | "complete" | "resume", title: string, done: string): ToolSpec => ({
  name: `${action}_job`,
  title,
  description: `${title} (job lifecycle, spec 3.1). Refused with INVALID_STATE_TRANSITION from the wrong status.`,
  toolset: "jobs",
  readOnly: false,
  destructive: false,
  idempotent: false,
  inputSchema: idOnly(),
  outputSchema: RECORD_OUTPUT,
  request: (a) => ({ method: "POST", path: `/api-job-lifecycle/${action}`, query: strings(a) }),
  result: (d) => ({ message: `Job ${d.job.job_number} ${done}: status ${d.job.status}`, value: d })
})

const operationAction = (action: "start" | "pause" | "resume" | "complete", title: string, done: string, withUser: boolean): ToolSpec => ({
  name: `${action}_operation`,
  title,
  description: `${title} (operation lifecycle, spec 3.2)${withUser ? "; with user_id a time entry is opened for that operator" : ""}.`,
  toolset: "operations",
  readOnly: false,
  destructive: false,
  idempotent: false,
  inputSchema: idOnly(withUser ? { user_id: { type: "string", format: "uuid", description: "Operator (profile) to log time for (UUID)" } } : {}),
  outputSchema: RECORD_OUTPUT,
  request: (a) => ({ method: "POST", path: `/api-operation-lifecycle/${action}`, query: strings(a) }),
  result: (d) => ({ message: `Operation ${d.operation?.operation_name ?? ""} ${done}: status ${d.operation?.status ?? "?"}`.replace("  ", " "), value: d })
})

/** A read tool over a list endpoint: its filters in, a compact page out. `fixed` query values are always sent. */
const fetchTool = (doc: ReturnType<typeof document>, o: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly toolset: Toolset
  readonly path: string
  readonly plural: string
  readonly noun: string
  readonly fields: ReadonlyArray<string>
  readonly shape?: (row: any) => Record<string, unknown>
  readonly fixed?: Readonly<Record<string, string>>
}): ToolSpec => ({
  name: o.name,
  title: o.title,
  description: o.description,
  toolset: o.toolset,
  readOnly: true,
  destructive: false,
  idempotent: true,
  inputSchema: listInput(doc, o.path, Object.keys(o.fixed ?? {})),
  outputSchema: listOutput(o.plural),
  request: (a) => ({ method: "GET", path: o.path, query: { ...strings(a), ...o.fixed } }),
  result: page(o.plural, o.noun, o.fields, o.shape)
})

/** Every tool, built from the API definition once. */
export const allTools = (): ReadonlyArray<ToolSpec> => {
  const doc = document()
  return [
    fetchTool(doc, { name: "fetch_jobs", title: "Find jobs", description: "List jobs with their status, customer and due date; filters as GET /api-jobs.", toolset: "jobs", path: "/api-jobs", plural: "jobs", noun: "job", fields: JOB_FIELDS, shape: (j) => ({ ...j, parts: Array.isArray(j.parts) ? j.parts.length : undefined }) }),
    fetchTool(doc, { name: "fetch_parts", title: "Find parts", description: "List parts of jobs; filters as GET /api-parts.", toolset: "parts", path: "/api-parts", plural: "parts", noun: "part", fields: PART_FIELDS }),
    fetchTool(doc, { name: "fetch_tasks", title: "Find operations", description: "List operations (tasks) with status, cell and operator; filters as GET /api-operations.", toolset: "operations", path: "/api-operations", plural: "operations", noun: "operation", fields: TASK_FIELDS }),
    fetchTool(doc, { name: "fetch_issues", title: "Find issues", description: "List quality issues and NCRs; filters as GET /api-issues.", toolset: "quality", path: "/api-issues", plural: "issues", noun: "issue", fields: ISSUE_FIELDS }),
    fetchTool(doc, { name: "fetch_ncrs", title: "Find NCRs", description: "List non-conformance reports (issues of type ncr); filters as GET /api-issues.", toolset: "quality", path: "/api-issues", plural: "issues", noun: "NCR", fields: ISSUE_FIELDS, fixed: { issue_type: "ncr" } }),
    {
      name: "get_dashboard_stats",
      title: "Dashboard",
      description: "The floor at a glance: jobs and operations by status, overdue jobs, open issues and NCRs by severity, work in progress per cell, minutes logged today (UTC).",
      toolset: "dashboard",
      readOnly: true,
      destructive: false,
      idempotent: true,
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      outputSchema: RECORD_OUTPUT,
      request: () => ({ method: "GET", path: "/api-dashboard-stats" }),
      result: (d) => ({
        message: `${Object.values(d.jobs_by_status as Record<string, number>).reduce((a, b) => a + b, 0)} jobs (${d.overdue_jobs} overdue), ` +
          `${(d.operations_by_status as Record<string, number>).in_progress ?? 0} operations in progress, ${d.minutes_logged_today} minutes logged today`,
        value: d
      })
    },
    {
      name: "create_job",
      title: "Create a job",
      description: "Create a job with its parts and their operations, exactly like POST /api-jobs.",
      toolset: "jobs",
      readOnly: false,
      destructive: false,
      idempotent: false,
      inputSchema: bodyInput(doc, "/api-jobs", "post"),
      aliases: Object.keys(jobAliases),
      outputSchema: RECORD_OUTPUT,
      request: (a) => ({ method: "POST", path: "/api-jobs", body: a }),
      result: (d) => ({ message: `Job ${d.job.job_number} created with ${d.parts?.length ?? 0} part(s)`, value: d })
    },
    {
      name: "update_job",
      title: "Update a job",
      description: "Change a job's fields (PATCH /api-jobs); a status change must be a lifecycle move.",
      toolset: "jobs",
      readOnly: false,
      destructive: false,
      idempotent: true,
      inputSchema: bodyInput(doc, "/api-jobs", "patch", { id: ID }),
      aliases: Object.keys(jobAliases),
      outputSchema: RECORD_OUTPUT,
      request: (a) => ({ method: "PATCH", path: "/api-jobs", query: { id: String(a.id ?? "") }, body: withoutId(a) }),
      result: (d) => ({ message: `Job ${d.job.job_number} updated`, value: d })
    },
    jobAction("start", "Start a job", "started"),
    jobAction("stop", "Put a job on hold", "stopped"),
    jobAction("complete", "Complete a job", "completed"),
    jobAction("resume", "Resume a job", "resumed"),
    operationAction("start", "Start an operation", "started", true),
    operationAction("pause", "Pause an operation", "paused", false),
    operationAction("resume", "Resume an operation", "resumed", true),
    operationAction("complete", "Complete an operation", "completed", false),
    {
      name: "update_operation",
      title: "Update an operation",
      description: "Change an operation's progress, notes, operator or cell (PATCH /api-operations).",
      toolset: "operations",
      readOnly: false,
      destructive: false,
      idempotent: true,
      inputSchema: bodyInput(doc, "/api-operations", "patch", { id: ID }),
      aliases: Object.keys(operationPatchAliases),
      outputSchema: RECORD_OUTPUT,
      request: (a) => ({ method: "PATCH", path: "/api-operations", query: { id: String(a.id ?? "") }, body: withoutId(a) }),
      result: (d) => ({ message: `Operation ${d.operation.operation_name} updated: status ${d.operation.status}`, value: d })
    },
    {
      name: "create_ncr",
      title: "Raise an NCR",
      description: "Raise a non-conformance report on an operation (POST /api-issues with issue_type ncr); the NCR number is generated.",
      toolset: "quality",
      readOnly: false,
      destructive: false,
      idempotent: false,
      // an NCR needs a severity (REST: "severity is required when issue_type is ncr"), which an issue may omit
      inputSchema: bodyInput(doc, "/api-issues", "post", {}, ["issue_type", "ncr_number"], ["severity"]),
      aliases: Object.keys(issueAliases),
      outputSchema: RECORD_OUTPUT,
      request: (a) => ({ method: "POST", path: "/api-issues", body: { ...a, issue_type: "ncr" } }),
      result: (d) => ({ message: `NCR ${d.issue.ncr_number} raised: ${d.issue.title}`, value: d })
    },
    {
      name: "add_substep",
      title: "Add a checklist step",
      description: "Add a substep (checklist step) to an operation (POST /api-substeps).",
      toolset: "substeps",
      readOnly: false,
      destructive: false,
      idempotent: false,
      inputSchema: bodyInput(doc, "/api-substeps", "post", {}, ["completed"]),
      outputSchema: RECORD_OUTPUT,
      request: (a) => ({ method: "POST", path: "/api-substeps", body: a }),
      result: (d) => ({ message: `Substep ${d.substep.sequence} added: ${d.substep.description}`, value: d })
    },
    {
      name: "complete_substep",
      title: "Tick a checklist step",
      description: "Mark a substep completed (PATCH /api-substeps completed=true).",
      toolset: "substeps",
      readOnly: false,
      destructive: false,
      idempotent: true,
      inputSchema: idOnly(),
      outputSchema: RECORD_OUTPUT,
      request: (a) => ({ method: "PATCH", path: "/api-substeps", query: { id: String(a.id ?? "") }, body: { completed: true } }),
      result: (d) => ({ message: `Substep ${d.substep.sequence} completed: ${d.substep.description}`, value: d })
    }
  ]
}
