// Ports the use cases need, implemented by adapters (adapters-pg for storage).
import { Context, Effect } from "effect"

/** The authenticated caller's tenant, provided by the driving adapter after authentication. */
export class CurrentTenant extends Context.Service<CurrentTenant, {
  readonly id: string
  readonly plan: string
  /** "api_key" for integration keys, "user" for session tokens (spec 5.4). */
  readonly via: "api_key" | "user"
  readonly role?: "admin" | "operator"
}>()("mes/domain/CurrentTenant") {}

/** Wraps a multi-step write in one database transaction (nested calls are savepoints). */
export class Tx extends Context.Service<Tx, {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
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

/** Answers which tenant owns an id (404 vs 403) and resolves references in bulk (one query per table). */
export class References extends Context.Service<References, {
  /** The owning tenant of `id`, or undefined when no tenant has it (soft-deleted jobs count as absent). */
  readonly ownerOf: (table: ReferenceTable, id: string) => Effect.Effect<string | undefined>
  /** For each id, the owning tenant; ids absent from the map do not exist. */
  readonly owners: (table: ReferenceTable, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  /** Cell ids by name within the tenant. */
  readonly cellsByName: (tenantId: string, names: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
}>()("mes/domain/References") {}

/** UUIDs for new records; overridable in tests. */
export const newId = (): string => globalThis.crypto.randomUUID()
