// The Effect RPC group of mes (issue 13 item 2b): the domain's main use cases at /functions/v1/rpc, for Effect
// services that call mes with typed errors end to end. Shared by the server (rpc/server.ts) and @mes/client
// (`@mes/adapters-http/rpc`): loads the definition's schemas, no server code.
import * as Schema from "effect/Schema"
import { Rpc, RpcGroup, RpcMiddleware } from "effect/rpc"
import { CurrentTenant, Issue, IssueCreate, JobCreate, TimeEntry, TimeEntryCreate } from "@mes/domain"
import { JobCreated, JobDetail, JobWithParts } from "../contract/api.ts"
import { JobMoved, OperationMoved } from "../contract/api-lifecycle.ts"
import { Pagination } from "../contract/envelope.ts"
import { MesError } from "./errors.ts"

export * from "./errors.ts"

/** API-key authentication of each call (`Authorization: Bearer` or `X-API-Key`), providing the caller's tenant. */
export class MesRpcAuth extends RpcMiddleware.Service<MesRpcAuth, { provides: CurrentTenant }>()("mes/rpc/MesRpcAuth", {
  /** Unauthorized (401), or RateLimited (429) past the plan's daily limit in cloud mode. */
  error: MesError
}) {}

/**
 * A request body as the REST API takes it: typed for the caller (the JSON form of the domain's input schema) but
 * sent as it is, for the server's domain validation to answer `ValidationFailed` with spec 7.3 details (a client-side
 * schema would throw a defect instead of a typed error).
 */
const body = <S extends Schema.Top>(_schema: S) => Schema.Unknown as unknown as Schema.Codec<S["Encoded"], S["Encoded"]>

const Id = Schema.String
const dataOf = <S extends Schema.Struct<{ readonly success: Schema.Top; readonly data: Schema.Top }>>(envelope: S): S["fields"]["data"] => envelope.fields.data

export const OperationAction = Schema.Literals(["start", "pause", "resume", "complete"])
export const JobAction = Schema.Literals(["start", "stop", "resume", "complete"])

/** GET /api-jobs query parameters (filters, sort, order, limit, offset), as the REST API takes them. */
export const ListQuery = Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean]))

/**
 * Each call's payload, as the server decodes it (rpc/server.ts): a payload of the wrong shape is the typed
 * `BadRequest`, as REST answers 400, not a defect of the RPC protocol (which decoding it before the call would be).
 */
export const Payloads = {
  CreateJob: Schema.Struct({ job: body(JobCreate) }),
  GetJob: Schema.Struct({ id: Id }),
  ListJobs: Schema.Struct({ query: ListQuery }),
  MoveJob: Schema.Struct({ id: Id, action: JobAction }),
  MoveOperation: Schema.Struct({ id: Id, action: OperationAction, user_id: Schema.optionalKey(Id) }),
  CreateTimeEntry: Schema.Struct({ entry: body(TimeEntryCreate) }),
  CreateIssue: Schema.Struct({ issue: body(IssueCreate) })
}

/** A payload typed for the caller by its schema in `Payloads` and sent as it is (even none): the server decodes it. */
const payload = <K extends keyof typeof Payloads>(tag: K) =>
  Schema.Any as unknown as Schema.Codec<(typeof Payloads)[K]["Type"], (typeof Payloads)[K]["Encoded"]>

export class MesRpcs extends RpcGroup.make(
  /** POST /api-jobs: a job with its parts and operations, in one transaction; answers the REST `data`. */
  Rpc.make("CreateJob", { payload: payload("CreateJob"), success: dataOf(JobCreated), error: MesError }),
  /** GET /api-jobs?id=: the job with its parts and their operations. */
  Rpc.make("GetJob", { payload: payload("GetJob"), success: JobDetail, error: MesError }),
  /** GET /api-jobs with its query parameters: `{ jobs, pagination }`. */
  Rpc.make("ListJobs", {
    payload: payload("ListJobs"),
    success: Schema.Struct({ jobs: Schema.Array(JobWithParts), pagination: Pagination }),
    error: MesError
  }),
  /** POST /api-job-lifecycle/{action}?id= */
  Rpc.make("MoveJob", { payload: payload("MoveJob"), success: dataOf(JobMoved), error: MesError }),
  /** POST /api-operation-lifecycle/{action}?id=[&user_id=] */
  Rpc.make("MoveOperation", { payload: payload("MoveOperation"), success: dataOf(OperationMoved), error: MesError }),
  /** POST /api-time-entries: the time entry. */
  Rpc.make("CreateTimeEntry", { payload: payload("CreateTimeEntry"), success: TimeEntry, error: MesError }),
  /** POST /api-issues: the issue. */
  Rpc.make("CreateIssue", { payload: payload("CreateIssue"), success: Issue, error: MesError })
).middleware(MesRpcAuth) {}

export const RPC_PATH = "/rpc"
