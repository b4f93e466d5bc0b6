// The Node server under HttpServerLive holds requests that arrive before the application's handler is
// attached (issue 8 item 4: a request during start-up must never be left without an answer).
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { gatedServer } from "../src/app.ts"
import { rawExchange } from "./harness.ts"

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

describe("requests Node refuses before any handler", () => {
  const raw = (port: number, text: string) => rawExchange(port, (socket) => socket.end(text))

  it("answer in the error envelope: 431 for oversized headers, 400 for a malformed request line", async () => {
    const server = gatedServer()
    server.on("request", (_req, res) => res.writeHead(200).end("ok"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const big = await raw(port, `GET /functions/v1/api-jobs?q=${"x".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
      expect(big).toMatch(/^HTTP\/1\.1 431 /)
      expect(JSON.parse(big.slice(big.indexOf("\r\n\r\n") + 4))).toEqual({
        success: false,
        error: { code: "REQUEST_HEADER_FIELDS_TOO_LARGE", message: expect.any(String), statusCode: 431 }
      })
      const bad = await raw(port, "NOT A REQUEST\r\n\r\n")
      expect(bad).toMatch(/^HTTP\/1\.1 400 /)
      expect(JSON.parse(bad.slice(bad.indexOf("\r\n\r\n") + 4)).error.code).toBe("BAD_REQUEST")
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
