// Events of spec 6.1 and the outbox port: use cases append events in the same transaction as the
// change (a rolled-back change emits nothing); a dispatcher delivers them later. Payloads are
// documented in docs/events.md.
import { Context, Effect } from "effect"
import { CurrentTenant, newId } from "./ports.ts"

export const EVENT_TYPES = [
  "job.created",
  "job.updated",
  "job.started",
  "job.stopped",
  "job.resumed",
  "job.completed",
  "part.created",
  "part.updated",
  "part.started",
  "part.completed",
  "operation.started",
  "operation.paused",
  "operation.resumed",
  "operation.completed",
  "batch.started",
  "batch.completed",
  "issue.created",
  "ncr.created",
  "ncr.verified",
  "step.added",
  "step.completed"
] as const
export type EventType = typeof EVENT_TYPES[number]

export const isEventType = (s: string): s is EventType => (EVENT_TYPES as ReadonlyArray<string>).includes(s)

export interface DomainEvent {
  readonly id: string
  readonly type: EventType
  readonly data: Readonly<Record<string, unknown>>
}

export class Outbox extends Context.Service<Outbox, {
  /** Appends events of the tenant; joins the caller's transaction. */
  readonly append: (tenantId: string, events: ReadonlyArray<DomainEvent>) => Effect.Effect<void>
}>()("mes/domain/Outbox") {}

/** Appends events for the caller's tenant (call it inside the transaction of the change). */
export const emit = (events: ReadonlyArray<{ readonly type: EventType; readonly data: Readonly<Record<string, unknown>> }>) =>
  Effect.gen(function*() {
    if (events.length === 0) return
    const tenant = yield* CurrentTenant
    yield* (yield* Outbox).append(tenant.id, events.map((e) => ({ id: newId(), ...e })))
  })
