// Exit codes on SIGINT/SIGTERM. NodeRuntime.runMain interrupts the main fiber on a signal; the
// default teardown then exits 130. Once `serve` is listening, a signal is the normal way to stop
// it, so an interruption then exits 0 (after every finalizer ran: server closed, PGlite closed).
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"

let signalIsShutdown = false

/** Called by long-running commands once a signal means "stop normally". */
export const markSignalAsShutdown = () => {
  signalIsShutdown = true
}

export const teardown: Runtime.Teardown = (exit, onExit) => {
  if (signalIsShutdown && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
  return Runtime.defaultTeardown(exit, onExit)
}
