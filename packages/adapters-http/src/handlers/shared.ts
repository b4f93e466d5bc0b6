import type { Page } from "@mes/domain"
import { ok } from "../server.ts"

/** `data.<plural>` with `data.pagination` (spec 4.0, DECISIONS). */
export const listReply = (plural: string) => (page: Page<unknown>) =>
  ok({ [plural]: page.rows, pagination: { limit: page.limit, offset: page.offset, total: page.total } })
