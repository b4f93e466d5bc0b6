// /api-issues (spec 4.7): GET list or `?id=`, POST 201 `data.issue`, PATCH `?id=`. No DELETE (the spec has none).
import type { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Issue, IssueCreate, issueListSpec, IssuePatch } from "@mes/domain"
import {
  BadRequestError,
  ConflictError,
  created,
  ForbiddenError,
  idQuery,
  listQuery,
  many,
  NotFoundError,
  one,
  UnauthorizedError,
  ValidationError
} from "./envelope.ts"

const errors = [BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, ValidationError] as const

export class IssuesGroup extends HttpApiGroup.make("issues").add(
  HttpApiEndpoint.get("list", "/api-issues", {
    query: listQuery(issueListSpec),
    success: [many("issues", Issue), one("issue", Issue)],
    error: errors
  }),
  HttpApiEndpoint.post("create", "/api-issues", {
    payload: IssueCreate as Schema.Codec<unknown, unknown>,
    success: created(one("issue", Issue)),
    error: errors
  }),
  HttpApiEndpoint.patch("update", "/api-issues", {
    query: idQuery,
    payload: IssuePatch as Schema.Codec<unknown, unknown>,
    success: one("issue", Issue),
    error: errors
  })
) {}
