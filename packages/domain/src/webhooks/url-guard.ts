// SSRF guard port (issue: webhooks): with MES_DEPLOYMENT=cloud, webhook URLs that resolve to
// loopback, private, link-local or metadata addresses are refused at registration, again at
// delivery, and at the delivery's connect (the addresses its lookup returns); self-hosted allows them. Implemented by adapters-http (it needs DNS).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

export class UrlGuard extends Context.Service<UrlGuard, {
  /** Undefined when the URL may be called, else the reason it may not. */
  readonly check: (url: string) => Effect.Effect<string | undefined>
  /**
   * Why a delivery may not connect to this resolved IP address, or undefined when it may; absent: any address.
   * The delivery's own name lookup is judged by it, so a name that resolved to a public address when `check`
   * ran cannot lead the connection to a private one (DNS rebinding).
   */
  readonly checkAddress?: (address: string) => string | undefined
}>()("mes/domain/UrlGuard") {
  /** Allows every URL (self-hosted, and tests that post to 127.0.0.1). */
  static readonly allowAll = UrlGuard.of({ check: () => Effect.succeed(undefined) })
}
