// Shared shape of the state machines (spec 3): each row is {from, action, to} plus the timestamp
// effects the store applies in the same guarded UPDATE.
import { InvalidStateTransition } from "./errors.ts"

/** What a transition does to a timestamp column: set now, set now only if empty, or clear. */
export type Stamp = "now" | "first" | "clear"

export interface Transition<S extends string, A extends string> {
  readonly from: ReadonlyArray<S>
  readonly action: A
  readonly to: S
  readonly stamps: Readonly<Record<string, Stamp>>
  /** Extra effects named for the store (e.g. "actual_duration"). */
  readonly effects?: ReadonlyArray<string>
}

export type Machine<S extends string, A extends string> = ReadonlyArray<Transition<S, A>>

/** The row for an action, or the refusal naming current and required states. */
export const decide = <S extends string, A extends string>(
  machine: Machine<S, A>,
  entity: string,
  current: S,
  action: A
): Transition<S, A> | InvalidStateTransition => {
  const row = machine.find((t) => t.action === action)!
  return row.from.includes(current)
    ? row
    : new InvalidStateTransition({ entity, current, required: row.from, action })
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
