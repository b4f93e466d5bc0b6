// /api-issues (spec 4.7): GET list or `?id=`, POST 201 `data.issue`, PATCH `?id=`. No DELETE (the spec has none).
import type * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Issue, IssueCreate, issueListSpec, IssuePatch } from "@mes/domain"
import {
  apiErrors,
  created,
  idQuery,
  listQuery,
  many,
  one,
  patchErrors
} from "./envelope.ts"


export class IssuesGroup extends HttpApiGroup.make("issues").add(
  HttpApiEndpoint.get("list", "/api-issues", {
    query: listQuery(issueListSpec),
    success: [many("issues", Issue), one("issue", Issue)],
    error: apiErrors
  }),
  HttpApiEndpoint.post("create", "/api-issues", {
    payload: IssueCreate as Schema.Codec<unknown, unknown>,
    success: created(one("issue", Issue)),
    error: apiErrors
  }),
  HttpApiEndpoint.patch("update", "/api-issues", {
    query: idQuery,
    payload: IssuePatch as Schema.Codec<unknown, unknown>,
    success: one("issue", Issue),
    error: patchErrors
  })
) {}
