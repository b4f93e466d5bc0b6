// SSRF guard port (issue: webhooks): with MES_DEPLOYMENT=cloud, webhook URLs that resolve to
// loopback, private, link-local or metadata addresses are refused at registration and again at
// delivery; self-hosted allows them. Implemented by adapters-http (it needs DNS).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

export class UrlGuard extends Context.Service<UrlGuard, {
  /** Undefined when the URL may be called, else the reason it may not. */
  readonly check: (url: string) => Effect.Effect<string | undefined>
}>()("mes/domain/UrlGuard") {
  /** Allows every URL (self-hosted, and tests that post to 127.0.0.1). */
  static readonly allowAll = UrlGuard.of({ check: () => Effect.succeed(undefined) })
}
