// The transactional outbox (spec 6): events go in with the change, set-based, in one statement.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { Outbox } from "@mes/domain"

export const OutboxPg = Layer.effect(Outbox, Effect.gen(function*() {
  const sql = yield* SqlClient
  return Outbox.of({
    append: (tenantId, events) =>
      events.length === 0
        ? Effect.void
        : sql.unsafe(
          `INSERT INTO outbox (tenant_id, event_id, event_type, data)
           SELECT $1, e.id, e.type, e.data FROM json_to_recordset($2::json) AS e (id uuid, type text, data json, ord int)
           ORDER BY e.ord`,
          [tenantId, JSON.stringify(events.map((e, ord) => ({ ...e, ord })))]
        ).pipe(Effect.asVoid, Effect.orDie)
  })
}))
