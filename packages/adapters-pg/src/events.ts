// Event payloads built in SQL, in the same statement as the change (ARCHITECTURE: events in the
// same transaction as the change; one round trip per write). The shapes come from the domain
// (payloadShapes); this compiles one into an expression that writes the compact JSON text.
import type { EventPlan, PayloadShape } from "@mes/domain"
import { literal } from "./sql-text.ts"

const entry = (key: string, value: string) => `'${JSON.stringify(key)}:' || coalesce(${value}, 'null')`

/** Where an event's payload values come from, as SQL expressions over the source's rows. */
export interface PayloadSources {
  /** A record field's JSON text. */
  readonly field: (name: string) => string
  /** The whole record's JSON text. */
  readonly record?: string
  /** The status before a move (a text expression). */
  readonly previous?: string
  /** Further [key, JSON text expression] pairs. */
  readonly extra?: ReadonlyArray<readonly [string, string]>
}

/** The `data` of an event of `shape` as a SQL text expression. */
const payloadSql = (shape: PayloadShape, o: PayloadSources) => {
  const entries = shape.picks.map(([key, field]) => entry(key, o.field(field)))
  if (o.previous !== undefined) {
    entries.push(entry("previous_status", `to_json(${o.previous})::text`), entry("new_status", o.field("status")))
  }
  for (const [key, field] of shape.after ?? []) entries.push(entry(key, o.field(field)))
  for (const [key, value] of o.extra ?? []) entries.push(entry(key, value))
  if (shape.record !== undefined) entries.push(entry(shape.record, o.record ?? "NULL"))
  return `('{' || ${entries.join(` || ',' || `)} || '}')`
}

export interface EventSource {
  readonly event: EventPlan
  /** The type as an SQL text expression over the rows of `from`, when it depends on the row. */
  readonly typeSql?: string
  /** Where the payload's values come from, over the rows of `from` (compiled with the event's shape). */
  readonly payload: PayloadSources
  readonly from: string
  /** Orders the events of this source (default: as `from` yields them). */
  readonly orderBy?: string
}

/**
 * The CTEs that write events: `rows` selects them (`event_id` uuid, `type` text, `data` JSON text or json) as
 * `ev_in`; `ev_rows` numbers them from the outbox sequence in the order `orderBy` (over `ev_in`'s columns) gives;
 * `ev_log` keeps each payload, once, in the event log under that id and the writing transaction's id, and `ev`
 * queues for delivery, in the outbox, a reference to each event that an active webhook of the tenant subscribes to
 * (migration 0023): an event nobody subscribes to is never queued, and the fan-out finds the payload by
 * (tenant_id, xid, id). Both inserts are in the change's statement, hence in its transaction. Used as
 * `WITH …, ${eventWrites(…)} SELECT …`; `ev` returns the queued rows' id and event_id.
 */
export const eventWrites = (tenant: string, rows: string, orderBy = "n") => `ev_in AS (${rows}),
ev_rows AS (SELECT nextval('outbox_id_seq') AS id, r.* FROM (SELECT * FROM ev_in ORDER BY ${orderBy}) r),
ev_log AS (
  INSERT INTO event_log (tenant_id, seq, event_id, event_type, data, occurred_at)
  SELECT ${tenant}, r.id, r.event_id, r.type, r.data::text, now() FROM ev_rows r
),
ev AS (
  INSERT INTO outbox (id, tenant_id, event_id, event_type)
  SELECT r.id, ${tenant}, r.event_id, r.type FROM ev_rows r
  WHERE r.type = ANY (ARRAY(SELECT DISTINCT e FROM webhooks w, unnest(w.events) e WHERE w.tenant_id = ${tenant} AND w.active))
  RETURNING id, event_id
)`

/**
 * The events of several sources (eventWrites' CTEs), in source order; with `interleave`, in the order of the
 * sources' `orderBy` values (ties in source order): a bulk's events record by record.
 */
export const insertEvents = (tenant: string, sources: ReadonlyArray<EventSource>, o: { readonly interleave?: boolean } = {}) =>
  eventWrites(
    tenant,
    `SELECT mes_uuid7() AS event_id, e.type, e.data, e.source, e.n FROM (
     ${sources.map((s, i) =>
      `SELECT ${i} AS source, ${s.orderBy ?? "0"} AS n, ${s.typeSql ?? `${literal(s.event.type)}::text`} AS type, ${payloadSql(s.event.shape, s.payload)} AS data FROM ${s.from}`
    ).join("\n     UNION ALL ")}
   ) e`,
    o.interleave === true ? "n, source" : "source, n"
  )
