// The transactional outbox (spec 6): events go in with the change, set-based, in one statement.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { Outbox } from "@mes/domain"
import { eventWrites } from "../events.ts"

const APPEND = `WITH ${
  eventWrites("$1", "SELECT e.id AS event_id, e.type, e.data, e.ord AS n FROM json_to_recordset($2::json) AS e (id uuid, type text, data json, ord int)")
} SELECT 1`

export const OutboxPg = Layer.effect(Outbox, Effect.gen(function*() {
  const sql = yield* SqlClient
  return Outbox.of({
    append: (tenantId, events) =>
      events.length === 0
        ? Effect.void
        : sql.unsafe(APPEND, [tenantId, JSON.stringify(events.map((e, ord) => ({ ...e, ord })))]).pipe(Effect.asVoid, Effect.orDie)
  })
}))
