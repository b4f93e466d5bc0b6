// GET /api-erp-sync/changes (issue 11): what changed in mes since a cursor, for the ERP to pull shop-floor
// progress back. Served from the event log: every event once, in order, across pages, however writes interleave.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BadRequest, type ValidationFailed } from "../errors.ts"
import { isEventType } from "../events.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant } from "../ports.ts"
import { decodeLimit } from "../query.ts"
import { detail, validationFailed } from "../validation.ts"

/** A position in the log: the writing transaction and the event's place in it. */
export interface ChangeCursor {
  readonly xid: string
  readonly seq: string
}

export interface ChangePage {
  /** `[{cursor, event_id, event_type, occurred_at, data}, ...]` built by PostgreSQL. */
  readonly changes: JsonText<ReadonlyArray<unknown>>
  readonly count: number
  /** Where the page ended (the cursor given when it is empty). */
  readonly last: ChangeCursor | undefined
}

export class ChangeFeedStore extends Context.Service<ChangeFeedStore, {
  readonly page: (tenantId: string, after: ChangeCursor, limit: number, types: ReadonlyArray<string> | undefined) => Effect.Effect<ChangePage>
}>()("mes/domain/ChangeFeedStore") {}

const CURSOR = /^(\d{1,20})\.(\d{1,19})$/
/** The start of the log. */
const ORIGIN: ChangeCursor = { xid: "0", seq: "0" }

export const formatCursor = (c: ChangeCursor) => `${c.xid}.${c.seq}`

export class Changes extends Context.Service<Changes, {
  /** `since` (a cursor from an earlier page; none = the start), `limit` 1-1000 (default 100), `types` (comma-separated). */
  readonly feed: (query: Readonly<Record<string, string>>) => Effect.Effect<
    { readonly changes: JsonText<ReadonlyArray<unknown>>; readonly next_cursor: string; readonly has_more: boolean },
    BadRequest | ValidationFailed,
    CurrentTenant
  >
}>()("mes/domain/Changes") {
  static readonly layer = Layer.effect(Changes, Effect.map(Effect.service(ChangeFeedStore), (store) =>
    Changes.of({
      feed: (query) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          let after = ORIGIN
          if (query.since !== undefined && query.since !== "") {
            const m = CURSOR.exec(query.since)
            if (m === null) return yield* new BadRequest({ message: "since must be a cursor from an earlier page (next_cursor)" })
            after = { xid: m[1]!, seq: m[2]! }
          }
          const limit = yield* decodeLimit(query.limit)
          const types = query.types === undefined || query.types === "" ? undefined : query.types.split(",").map((t) => t.trim())
          const unknown = types?.filter((t) => !isEventType(t)) ?? []
          if (unknown.length > 0) {
            return yield* validationFailed("query", [detail("query", query, ["types"], "ENUM_CONSTRAINT", `Unknown event type ${unknown.join(", ")}`, unknown.join(","))])
          }
          const page = yield* store.page(tenant.id, after, limit, types)
          return { changes: page.changes, next_cursor: formatCursor(page.last ?? after), has_more: page.count === limit }
        })
    })))
}
