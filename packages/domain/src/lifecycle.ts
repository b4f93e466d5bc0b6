// Shared shape of the state machines (spec 3): each row is {from, action, to} plus the timestamp
// effects the store applies in the same guarded UPDATE.
import * as Effect from "effect/Effect"
import { InvalidStateTransition, NotFound } from "./errors.ts"
import { type EventPlan, eventPlan, type EventType } from "./events.ts"
import type { JsonText } from "./json.ts"
import type { ReferenceTable } from "./ports.ts"
import { checkOwner, label, missingReferenceDetails, type Reference } from "./references.ts"
import { validationFailed } from "./validation.ts"

/** What a transition does to a timestamp column: set now, set now only if empty, or clear. */
export type Stamp = "now" | "first" | "clear"

export interface Transition<S extends string, A extends string> {
  readonly from: ReadonlyArray<S>
  readonly action: A
  readonly to: S
  readonly stamps: Readonly<Record<string, Stamp>>
  /** Extra effects named for the store (e.g. "actual_duration"). */
  readonly effects?: ReadonlyArray<string>
  /** The event the move emits (spec 6.1). */
  readonly event?: EventType
}

export type Machine<S extends string, A extends string> = ReadonlyArray<Transition<S, A>>

/** The refusal of lifecycle action `t` for a record in status `current`: names the statuses it needs. */
export const refuseAction = (entity: string, t: { readonly from: ReadonlyArray<string>; readonly action: string }) => (current: string) =>
  new InvalidStateTransition({ entity, current, required: t.from, action: t.action })

/** The row for an action, or the refusal naming current and required states. */
export const decide = <S extends string, A extends string>(
  machine: Machine<S, A>,
  entity: string,
  current: S,
  action: A
): Transition<S, A> | InvalidStateTransition => {
  const row = machine.find((t) => t.action === action)!
  return row.from.includes(current) ? row : refuseAction(entity, row)(current)
}

/** The transition a PATCH to `target` means from `current`, or undefined when none leads there. */
export const transitionTo = <S extends string, A extends string>(machine: Machine<S, A>, current: S, target: S) => {
  const candidates = machine.filter((t) => t.to === target && t.from.includes(current))
  // the most specific row wins: on_hold → in_progress is a resume, not a start
  return candidates.sort((a, b) => a.from.length - b.from.length)[0]
}

/** The refusal for a PATCH to `target`: names the current status and those a move to target needs. */
export const refuseMove = <S extends string, A extends string>(
  machine: Machine<S, A>,
  entity: string,
  current: S,
  target: S
): InvalidStateTransition =>
  new InvalidStateTransition({
    entity,
    current,
    required: [...new Set(machine.filter((t) => t.to === target).flatMap((t) => t.from))],
    action: `set status to '${target}' on`
  })

/** An event of a move: with `move`, the payload carries previous_status and new_status. */
export type MoveEvent = EventPlan & { readonly move: boolean }

/** An event of a move plan (`move`: with the statuses of the move, docs/events.md). */
export const moveEvent = (type: EventType, move = true): MoveEvent => ({ ...eventPlan(type), move })

/** The events of a lifecycle row: its own event, with the statuses of the move. */
export const rowEvents = (t: { readonly event?: EventType | undefined }): Array<MoveEvent> => [moveEvent(t.event!)]

/** One case of a move plan: from these statuses, these stamps, effects and events. */
export interface MoveCase {
  readonly from: ReadonlyArray<string>
  readonly stamps: Readonly<Record<string, Stamp>>
  readonly effects: ReadonlyArray<string>
  readonly events: ReadonlyArray<MoveEvent>
}

/**
 * A guarded move as the store runs it in one statement: to `to`, from any status of a case (the
 * case whose `from` holds the current status supplies the stamps, effects and events), with
 * `changes` applied in the same UPDATE (a PATCH that also sets status).
 */
export interface MovePlan {
  readonly to: string
  readonly cases: ReadonlyArray<MoveCase>
  readonly changes: Readonly<Record<string, unknown>>
}

/** What a one-statement move found: the owner of the id, the status it saw, and the moved record. */
export interface MoveOutcome<T> {
  /** The tenant that owns the record; undefined when no tenant has it. */
  readonly owner: string | undefined
  /** The record's status when the statement ran. */
  readonly current: string | undefined
  readonly moved: { readonly record: JsonText<T>; readonly previous: string } | undefined
  /** Indexes of references the statement checked and found missing (nothing moved then). */
  readonly missingRefs: ReadonlyArray<number>
}

/** The plan of a lifecycle action (one case: the table's row). */
export const actionPlan = <S extends string, A extends string>(
  machine: Machine<S, A>,
  action: A,
  events: (t: Transition<S, A>) => ReadonlyArray<MoveEvent>,
  changes: Readonly<Record<string, unknown>> = {}
): MovePlan => {
  const t = machine.find((r) => r.action === action)!
  return { to: t.to, cases: [{ from: t.from, stamps: t.stamps, effects: t.effects ?? [], events: events(t) }], changes }
}

/** The plan of a PATCH to `target`: for each status, the move the table allows from it (transitionTo). */
export const patchPlan = <S extends string, A extends string>(
  machine: Machine<S, A>,
  target: S,
  events: (t: Transition<S, A>) => ReadonlyArray<MoveEvent>,
  changes: Readonly<Record<string, unknown>> = {}
): MovePlan => {
  const statuses = [...new Set(machine.flatMap((t) => t.from))]
  const byTransition = new Map<Transition<S, A>, Array<S>>()
  for (const s of statuses) {
    const t = transitionTo(machine, s, target)
    if (t !== undefined) byTransition.set(t, [...(byTransition.get(t) ?? []), s])
  }
  return {
    to: target,
    cases: [...byTransition].map(([t, from]) => ({ from, stamps: t.stamps, effects: t.effects ?? [], events: events(t) })),
    changes
  }
}

/**
 * The answer to a one-statement move: the moved record, or 404 / 403 / 409 naming the current status,
 * or 422 for references the statement found missing. `refusal` builds the 409 from the current
 * status; `recheck` reads the status again when the statement saw an allowed one but did not move
 * (a concurrent move won in between). `refs.first`: a missing reference is answered before a wrong
 * state (PATCH checks its fields first); otherwise the state is (a lifecycle action, spec 7.4).
 */
export const settleMove = <T>(
  o: {
    readonly table: ReferenceTable
    readonly id: string
    readonly plan: MovePlan
    readonly refusal: (current: string) => InvalidStateTransition
    readonly recheck: Effect.Effect<string | undefined>
    readonly refs?: { readonly list: ReadonlyArray<Reference>; readonly root: string; readonly input: unknown; readonly first: boolean }
  },
  outcome: MoveOutcome<T>
) =>
  Effect.gen(function*() {
    yield* checkOwner(o.table, o.id, outcome.owner)
    if (outcome.moved !== undefined) return outcome.moved
    const refs = o.refs
    const missing = refs === undefined || outcome.missingRefs.length === 0
      ? undefined
      : validationFailed(refs.root, missingReferenceDetails(refs.root, refs.input, refs.list, outcome.missingRefs))
    if (missing !== undefined && refs!.first) return yield* missing
    let current = outcome.current
    if (current !== undefined && o.plan.cases.some((c) => c.from.includes(current!))) {
      // the state allowed the move: a missing reference stopped it, or a concurrent move won
      if (missing !== undefined) return yield* missing
      current = yield* o.recheck
    }
    if (current === undefined) return yield* new NotFound({ entity: label[o.table], id: o.id })
    return yield* o.refusal(current)
  })
