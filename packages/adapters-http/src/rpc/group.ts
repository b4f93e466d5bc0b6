// The Effect RPC group of mes (issue 13 item 2b): the domain's main use cases at /functions/v1/rpc, for Effect
// services that call mes with typed errors end to end. Shared by the server (rpc/server.ts) and @mes/client.
import * as Schema from "effect/Schema"
import { Rpc, RpcGroup, RpcMiddleware } from "effect/rpc"
import { CurrentTenant } from "@mes/domain"

/** Every refusal of a use case, as the REST API's error envelope says it (code, status, message, details). */
export class MesRpcError extends Schema.TaggedError<MesRpcError>()("MesRpcError", {
  code: Schema.String,
  statusCode: Schema.Int,
  message: Schema.String,
  details: Schema.optionalKey(Schema.Array(Schema.Struct({
    field: Schema.String,
    message: Schema.String,
    constraint: Schema.String,
    value: Schema.Unknown
  })))
}) {}

/** API-key authentication of each call (`Authorization: Bearer` or `X-API-Key`), providing the caller's tenant. */
export class MesRpcAuth extends RpcMiddleware.Service<MesRpcAuth, { provides: CurrentTenant }>()("mes/rpc/MesRpcAuth", {
  error: MesRpcError
}) {}

const Id = Schema.String
/** Records as the REST API answers them (the same JSON). */
const Record = Schema.Unknown

export const OperationAction = Schema.Literals(["start", "pause", "resume", "complete"])
export const JobAction = Schema.Literals(["start", "stop", "resume", "complete"])

export class MesRpcs extends RpcGroup.make(
  /** POST /api-jobs: a job with its parts and operations (the body as the REST API takes it). */
  Rpc.make("CreateJob", { payload: { job: Schema.Unknown }, success: Record, error: MesRpcError }),
  Rpc.make("GetJob", { payload: { id: Id }, success: Record, error: MesRpcError }),
  /** GET /api-jobs with its query parameters: `{ jobs, pagination }`. */
  Rpc.make("ListJobs", { payload: { query: Schema.Record(Schema.String, Schema.String) }, success: Record, error: MesRpcError }),
  Rpc.make("MoveJob", { payload: { id: Id, action: JobAction }, success: Record, error: MesRpcError }),
  Rpc.make("MoveOperation", { payload: { id: Id, action: OperationAction, user_id: Schema.optionalKey(Id) }, success: Record, error: MesRpcError }),
  Rpc.make("CreateTimeEntry", { payload: { entry: Schema.Unknown }, success: Record, error: MesRpcError }),
  Rpc.make("CreateIssue", { payload: { issue: Schema.Unknown }, success: Record, error: MesRpcError })
).middleware(MesRpcAuth) {}

export const RPC_PATH = "/rpc"
