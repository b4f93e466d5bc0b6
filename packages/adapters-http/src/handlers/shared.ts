import type { Page, SyncResult } from "@mes/domain"
import { ok } from "../server.ts"

/** `data.<plural>` with `data.pagination` (spec 4.0, DECISIONS). */
export const listReply = (plural: string) => (page: Page<unknown>) =>
  ok({ [plural]: page.rows, pagination: { limit: page.limit, offset: page.offset, total: page.total } })

/** Sync answers 201 when the record was created and 200 when updated (spec 4.1 PUT sync). */
export const syncReply = (r: SyncResult) => ok(r, r.action === "created" ? 201 : 200)
