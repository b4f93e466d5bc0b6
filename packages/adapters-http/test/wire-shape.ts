// The shape of a JSON value for wire-format snapshots (wire-format.test.ts): key order and array
// lengths are kept, values that change from run to run become tags, everything else stays as is.
//
//   - a canonical lowercase UUID becomes "<uuid>", or "<uuid:label>" when the test named it;
//   - a string matching TIMESTAMP (exactly `Date.toISOString()`) becomes "<timestamp>"; anything else
//     that looks like a date-time stays verbatim, so a format change shows up as a snapshot diff;
//   - `NCR-2026-00001` becomes `NCR-<year>-00001`; a generated webhook secret "<whsec secret>";
//     the port of a 127.0.0.1 URL "<port>";
//   - a number that depends on elapsed wall-clock time becomes "<number>": always under ELAPSED keys,
//     and under TIMED_FIELDS keys of a record the test marked as timed (an operation that ran with
//     real time entries, and its time entries); only a number: a null stays null and a string stays
//     verbatim, so a type change shows up too;
//   - arrays under UNORDERED keys, whose order is not defined today, are sorted by their shapes;
//   - every other string, number, boolean and null is kept.
//
// Snapshots store `serialize(shape(x))`: JSON text with two-space indentation. Vitest's own object
// printer sorts keys, which would hide the very key order these tests pin.

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const NCR = /^NCR-\d{4}-(\d{5})$/
const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/
const LOCAL_URL = /^http:\/\/127\.0\.0\.1:\d+\//

/** Keys whose numbers always depend on elapsed wall-clock time. */
export const ELAPSED: ReadonlySet<string> = new Set([
  "actual_duration", // job: minutes from started_at to completed_at (two decimals)
  "tracked_seconds", // batch time share: whole seconds the batch's entries were open
  "share_seconds",
  "share_minutes",
  "duration_ms" // webhook log
])

/**
 * Keys whose numbers depend on elapsed time only in a timed record (`Labels.timed`): a record whose
 * `id` or `operation_id` is timed. Elsewhere they are exact: 0 before any time, a PATCHed value, or
 * the sum of manual entries with fixed times.
 */
export const TIMED_FIELDS: ReadonlySet<string> = new Set([
  "actual_time", // operation: sum of its ended time entries
  "duration_minutes" // time entry
])

/**
 * Arrays whose order the service does not define today (built from UPDATE ... RETURNING or a SELECT
 * without ORDER BY over the batch's operations): sorted here by their shapes, so only their content
 * is pinned. `time_entries` is listed by start_time, and a batch opens its entries at one instant.
 */
export const UNORDERED: ReadonlySet<string> = new Set(["operations_moved", "time_distribution"])

export interface ShapeOptions {
  /** More keys whose arrays are compared as sets (see UNORDERED). */
  readonly unordered?: ReadonlyArray<string>
}

/** Names for the ids a test knows, so a snapshot says which record an id points to. */
export class Labels {
  private readonly names = new Map<string, string>()
  /** Names `id` (first name wins) and returns it. */
  name<A extends string>(id: A, label: string): A {
    if (!UUID.test(id)) throw new Error(`not a UUID: ${String(id)}`)
    if (!this.names.has(id)) this.names.set(id, label)
    return id
  }
  of(id: string): string | undefined {
    return this.names.get(id)
  }
  private readonly timedIds = new Set<string>()
  /** Marks a record whose TIMED_FIELDS depend on real elapsed time (and its time entries). */
  timed(id: string): void {
    this.timedIds.add(id)
  }
  isTimed(id: unknown): boolean {
    return typeof id === "string" && this.timedIds.has(id)
  }
}

const shapeString = (s: string, labels: Labels): string => {
  if (UUID.test(s)) {
    const label = labels.of(s)
    return label === undefined ? "<uuid>" : `<uuid:${label}>`
  }
  if (TIMESTAMP.test(s)) return "<timestamp>"
  if (NCR.test(s)) return s.replace(NCR, "NCR-<year>-$1")
  if (WHSEC.test(s)) return "<whsec secret>"
  if (LOCAL_URL.test(s)) return s.replace(/^(http:\/\/127\.0\.0\.1:)\d+/, "$1<port>")
  return s
}

export const shape = (value: unknown, labels: Labels, options: ShapeOptions = {}): unknown => {
  const unordered = new Set([...UNORDERED, ...(options.unordered ?? [])])
  const go = (v: unknown, key: string | undefined, timed: boolean): unknown => {
    if (v === null) return null
    if (Array.isArray(v)) {
      const items = v.map((item) => go(item, undefined, false))
      if (key === undefined || !unordered.has(key)) return items
      return items.map((item) => [serialize(item), item] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, item]) => item)
    }
    switch (typeof v) {
      case "string":
        return shapeString(v, labels)
      case "number":
        return key !== undefined && (ELAPSED.has(key) || (timed && TIMED_FIELDS.has(key))) ? "<number>" : v
      case "boolean":
        return v
      case "object": {
        const record = v as Record<string, unknown>
        const isTimed = labels.isTimed(record.id) || labels.isTimed(record.operation_id)
        const out: Record<string, unknown> = {}
        for (const [k, child] of Object.entries(record)) out[k] = go(child, k, isTimed)
        return out
      }
      default:
        throw new Error(`not a JSON value: ${typeof v}`)
    }
  }
  return go(value, undefined, false)
}

/** JSON text in key order, two-space indented: what the snapshots store. */
export const serialize = (value: unknown): string => JSON.stringify(value, null, 2)

/**
 * A raw JSON text (e.g. a webhook body, whose bytes are signed) with the same tags applied by pattern,
 * so its exact spacing and key order stay visible. Only ELAPSED numbers are tagged here.
 */
export const shapeText = (text: string, labels: Labels): string =>
  text
    .replace(new RegExp(`("(?:${[...ELAPSED].join("|")})":\\s*)-?\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?`, "g"), `$1"<number>"`)
    .replace(/"([^"\\]*)"/g, (whole, s: string) => (UUID.test(s) || TIMESTAMP.test(s) || NCR.test(s) ? JSON.stringify(shapeString(s, labels)) : whole))
