// Ports the use cases need, implemented by adapters (adapters-pg for storage).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { Conflict, ValidationFailed } from "./errors.ts"

/** The authenticated caller's tenant, provided by the driving adapter after authentication. */
export class CurrentTenant extends Context.Service<CurrentTenant, {
  readonly id: string
  readonly plan: string
  /**
   * "api_key" for integration keys, "user" for session tokens (spec 5.4), "service" for the service-level
   * caller of the monthly task (spec 4.13), which acts for no tenant (`id` is empty).
   */
  readonly via: "api_key" | "user" | "service"
  readonly role?: "admin" | "operator"
}>()("mes/domain/CurrentTenant") {}

/** What a sync did with a record: `unchanged` when it already held every synced value (nothing written). */
export type SyncAction = "created" | "updated" | "unchanged"

/** Wraps a multi-step write in one database transaction (nested calls are savepoints). */
export class Tx extends Context.Service<Tx, {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Locks records (in id order, FOR NO KEY UPDATE) until the enclosing transaction ends: If-Match's compare, then
   * write, with no writer between; and a writer that must hold records before the rows that hang on them, as a move
   * does (an operation before its time entries; else two writers at once could deadlock; DECISIONS: time entries).
   */
  readonly lockRows: (table: ReferenceTable, ids: ReadonlyArray<string>) => Effect.Effect<void>
}>()("mes/domain/Tx") {}

export type ReferenceTable =
  | "jobs"
  | "parts"
  | "operations"
  | "cells"
  | "profiles"
  | "time_entries"
  | "batches"
  | "issues"
  | "substeps"
  | "webhooks"
  | "webhook_logs"
  | "api_keys"
  | "resources"
  | "materials"
  | "scrap_reasons"
  | "operation_quantities"
  | "assignments"
  | "substep_templates"
  | "substep_template_items"
  | "downtime"
  | "part_images"

/** Answers which tenant owns an id (404 vs 403) and resolves references in bulk (one query per table). */
export class References extends Context.Service<References, {
  /** The owning tenant of `id`, or undefined when no tenant has it (soft-deleted jobs count as absent). */
  readonly ownerOf: (table: ReferenceTable, id: string) => Effect.Effect<string | undefined>
  /** For each id, the owning tenant; ids absent from the map do not exist. */
  readonly owners: (table: ReferenceTable, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  /** Cell ids by name within the tenant. */
  readonly cellsByName: (tenantId: string, names: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
}>()("mes/domain/References") {}

// random bytes drawn 4 KiB at a time: a nested create makes dozens of ids
const pool = new Uint8Array(4096)
let used = pool.length
/** The two ASCII hex digits of each byte value, first digit in the low byte. */
const HEX_DIGITS = Uint16Array.from({ length: 256 }, (_, i) => {
  const s = i.toString(16).padStart(2, "0")
  return s.charCodeAt(0) | (s.charCodeAt(1) << 8)
})
// the id's ASCII, written in place and decoded once: joining 20 two-digit strings made a tree of ≈ 20 strings
// that the first hash or JSON.stringify flattened into yet another (≈ 440 bytes an id, 7 % of what a nested
// create allocated; now one string of 36 characters)
const text = new Uint8Array(36)
text[8] = text[13] = text[18] = text[23] = 0x2d // "-"
const ascii = new TextDecoder()
const hexAt = (at: number, byte: number) => {
  const digits = HEX_DIGITS[byte]!
  text[at] = digits & 0xff
  text[at + 1] = digits >>> 8
}

/**
 * A new record id: a time-ordered UUID (version 7, RFC 9562: 48-bit Unix milliseconds, then 74
 * random bits). Rows created together sort together, so their index entries land on the same
 * right-most pages instead of one random page each.
 */
export const newId = (): string => {
  if (used + 10 > pool.length) {
    globalThis.crypto.getRandomValues(pool)
    used = 0
  }
  const r = used
  used += 10
  const ms = Date.now()
  const hi = Math.floor(ms / 0x100000000)
  const lo = ms >>> 0
  hexAt(0, (hi >>> 8) & 0xff)
  hexAt(2, hi & 0xff)
  hexAt(4, lo >>> 24)
  hexAt(6, (lo >>> 16) & 0xff)
  hexAt(9, (lo >>> 8) & 0xff)
  hexAt(11, lo & 0xff)
  hexAt(14, 0x70 | (pool[r]! & 0x0f))
  hexAt(16, pool[r + 1]!)
  hexAt(19, 0x80 | (pool[r + 2]! & 0x3f))
  hexAt(21, pool[r + 3]!)
  for (let i = 4; i < 10; i++) hexAt(24 + 2 * (i - 4), pool[r + i]!)
  return ascii.decode(text)
}

/** What `GET /ready` reports: whether the database answers and holds every migration this build knows. */
export interface ReadinessReport {
  readonly database: "ok" | "unreachable"
  readonly migrations: "ok" | "pending" | "unknown"
}

/** Readiness of the storage (adapters-pg): never fails, answers within its own time bound. */
export class Readiness extends Context.Service<Readiness, {
  readonly check: Effect.Effect<ReadinessReport>
}>()("mes/domain/Readiness") {}

/** An answer kept for an Idempotency-Key: the HTTP status and the envelope's bytes. */
export interface KeptReply {
  readonly status: number
  readonly body: Uint8Array
}

/**
 * Writes sent with an Idempotency-Key (issue 8): `once` runs `write` in one transaction with the kept answer,
 * so a key never exists without its effect. The same key again replays the kept answer when the request is
 * the same (`fingerprint`), is a ValidationFailed when it is not, and a Conflict while the first still runs.
 * A write that fails keeps nothing: retrying it runs it again.
 */
export class Idempotency extends Context.Service<Idempotency, {
  readonly once: <E, R>(
    tenantId: string,
    key: string,
    fingerprint: string,
    write: Effect.Effect<KeptReply, E, R>
  ) => Effect.Effect<{ readonly replayed: boolean; readonly reply: KeptReply }, E | Conflict | ValidationFailed, R>
}>()("mes/domain/Idempotency") {}
