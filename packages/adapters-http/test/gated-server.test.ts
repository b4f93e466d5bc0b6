// The Node server under HttpServerLive holds requests that arrive before the application's handler is
// attached (issue 8 item 4: a request during start-up must never be left without an answer).
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { gatedServer } from "../src/app.ts"

describe("gatedServer", () => {
  it("answers a request that arrived before the handler was attached, once it is", async () => {
    const server = gatedServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const early = fetch(`http://127.0.0.1:${port}/early`).then(async (r) => `${r.status} ${await r.text()}`)
      await new Promise((resolve) => setTimeout(resolve, 150))
      server.on("request", (req, res) => res.writeHead(200).end(`handled ${req.url}`))
      expect(await early).toBe("200 handled /early")
      // later requests go straight to the handler, once each
      expect(await (await fetch(`http://127.0.0.1:${port}/late`)).text()).toBe("handled /late")
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
