// Every (state, action) pair of the spec 3 tables: allowed exactly when the table lists it, with
// the effects its row names; PATCH targets map to the right row.
import { describe, expect, it } from "vitest"
import {
  addOperationsFrom,
  batchMachine,
  completeFromAnyState,
  decide,
  InvalidStateTransition,
  jobCreatedMoves,
  jobMachine,
  operationMachine,
  refuseMove,
  transitionTo
} from "../src/index.ts"

const jobStates = ["not_started", "in_progress", "on_hold", "completed"] as const
const jobActions = ["start", "stop", "complete", "resume"] as const
// spec 3.1, as written: action → (allowed from, to)
const jobSpec = {
  start: { from: ["not_started", "on_hold"], to: "in_progress" },
  stop: { from: ["in_progress"], to: "on_hold" },
  complete: { from: ["in_progress"], to: "completed" },
  resume: { from: ["on_hold"], to: "in_progress" }
} as const

const opStates = ["not_started", "in_progress", "on_hold", "completed"] as const
const opActions = ["start", "pause", "resume", "complete"] as const
// spec 3.2 (on_hold is the paused condition)
const opSpec = {
  start: { from: ["not_started", "on_hold"], to: "in_progress" },
  pause: { from: ["in_progress"], to: "on_hold" },
  resume: { from: ["on_hold"], to: "in_progress" },
  complete: { from: ["in_progress"], to: "completed" }
} as const

describe("job lifecycle (spec 3.1)", () => {
  for (const state of jobStates) {
    for (const action of jobActions) {
      const allowed = (jobSpec[action].from as ReadonlyArray<string>).includes(state)
      it(`${action} from ${state} is ${allowed ? `allowed → ${jobSpec[action].to}` : "refused"}`, () => {
        const result = decide(jobMachine, "job", state, action)
        if (allowed) {
          expect(result).not.toBeInstanceOf(InvalidStateTransition)
          expect((result as { to: string }).to).toBe(jobSpec[action].to)
        } else {
          expect(result).toBeInstanceOf(InvalidStateTransition)
          const e = result as InvalidStateTransition
          expect(e.current).toBe(state)
          expect(e.required).toEqual(jobSpec[action].from)
          expect(e.message).toContain(`'${state}'`)
          for (const r of jobSpec[action].from) expect(e.message).toContain(`'${r}'`)
        }
      })
    }
  }

  it("start sets started_at only the first time and clears paused_at", () => {
    expect(jobMachine.find((t) => t.action === "start")!.stamps).toEqual({ started_at: "first", paused_at: "clear" })
  })
  it("stop sets paused_at", () => {
    expect(jobMachine.find((t) => t.action === "stop")!.stamps).toEqual({ paused_at: "now" })
  })
  it("resume sets resumed_at and clears paused_at", () => {
    expect(jobMachine.find((t) => t.action === "resume")!.stamps).toEqual({ resumed_at: "now", paused_at: "clear" })
  })
  it("complete sets completed_at and computes actual_duration", () => {
    const row = jobMachine.find((t) => t.action === "complete")!
    expect(row.stamps).toEqual({ completed_at: "now" })
    expect(row.effects).toEqual(["actual_duration"])
  })

  it("PATCH status targets map to the lifecycle row; on_hold → in_progress is a resume", () => {
    expect(transitionTo(jobMachine, "not_started", "in_progress")!.action).toBe("start")
    expect(transitionTo(jobMachine, "on_hold", "in_progress")!.action).toBe("resume")
    expect(transitionTo(jobMachine, "in_progress", "on_hold")!.action).toBe("stop")
    expect(transitionTo(jobMachine, "in_progress", "completed")!.action).toBe("complete")
    expect(transitionTo(jobMachine, "completed", "in_progress")).toBeUndefined()
    expect(transitionTo(jobMachine, "not_started", "completed")).toBeUndefined()
    const refusal = refuseMove(jobMachine, "job", "in_progress", "not_started")
    expect(refusal.required).toEqual([])
    expect(refusal.message).toContain("'in_progress'")
  })
})

describe("operation lifecycle (spec 3.2)", () => {
  for (const state of opStates) {
    for (const action of opActions) {
      const allowed = (opSpec[action].from as ReadonlyArray<string>).includes(state)
      it(`${action} from ${state} is ${allowed ? `allowed → ${opSpec[action].to}` : "refused"}`, () => {
        const result = decide(operationMachine, "operation", state, action)
        if (allowed) expect((result as { to: string }).to).toBe(opSpec[action].to)
        else {
          expect(result).toBeInstanceOf(InvalidStateTransition)
          expect((result as InvalidStateTransition).required).toEqual(opSpec[action].from)
        }
      })
    }
  }

  it("start and resume open a time entry; pause and complete end them; complete sets 100 %", () => {
    const effects = Object.fromEntries(operationMachine.map((t) => [t.action, t.effects]))
    expect(effects).toEqual({
      start: ["open_time_entry"],
      pause: ["close_time_entries"],
      resume: ["open_time_entry"],
      complete: ["complete_percentage", "close_time_entries"]
    })
  })

  it("timestamps: started_at first start only, paused_at set and cleared, resumed_at, completed_at", () => {
    const stamps = Object.fromEntries(operationMachine.map((t) => [t.action, t.stamps]))
    expect(stamps).toEqual({
      start: { started_at: "first", paused_at: "clear" },
      pause: { paused_at: "now" },
      resume: { resumed_at: "now", paused_at: "clear" },
      complete: { completed_at: "now" }
    })
  })

  it("PATCH status completed is allowed from every state and keeps the first completed_at", () => {
    expect([...completeFromAnyState.from].sort()).toEqual([...opStates].sort())
    expect(completeFromAnyState.stamps).toEqual({ completed_at: "first" })
  })
})

const batchStates = ["draft", "ready", "in_progress", "completed", "cancelled"] as const
const batchActions = ["start", "stop", "ready", "cancel"] as const
// spec 3.3 (+ cancel from draft/ready, docs/DECISIONS.md)
const batchSpec = {
  start: { from: ["draft", "ready"], to: "in_progress" },
  stop: { from: ["in_progress"], to: "completed" },
  ready: { from: ["draft"], to: "ready" },
  cancel: { from: ["draft", "ready"], to: "cancelled" }
} as const

describe("batch lifecycle (spec 3.3)", () => {
  for (const state of batchStates) {
    for (const action of batchActions) {
      const allowed = (batchSpec[action].from as ReadonlyArray<string>).includes(state)
      it(`${action} from ${state} is ${allowed ? `allowed → ${batchSpec[action].to}` : "refused"}`, () => {
        const result = decide(batchMachine, "batch", state, action)
        if (allowed) expect((result as { to: string }).to).toBe(batchSpec[action].to)
        else expect(result).toBeInstanceOf(InvalidStateTransition)
      })
    }
  }

  it("start moves the operations to in_progress; stop completes them and shares the time", () => {
    expect(batchMachine.find((t) => t.action === "start")!.effects).toEqual(["start_operations"])
    expect(batchMachine.find((t) => t.action === "stop")!.effects).toEqual(["complete_operations"])
  })

  it("add-operations needs draft or ready", () => {
    expect([...addOperationsFrom]).toEqual(["draft", "ready"])
  })
})

describe("a job created in a status of its own", () => {
  it("carries the moves that lead there from not_started: none, start, start+stop, start+complete", () => {
    expect(Object.fromEntries([...jobCreatedMoves].map(([to, moves]) => [to, moves.map((t) => t.action)]))).toEqual({
      not_started: [],
      in_progress: ["start"],
      on_hold: ["start", "stop"],
      completed: ["start", "complete"]
    })
  })
})
