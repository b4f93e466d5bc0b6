// A TCP proxy a test can cut (connections refused and dropped), black-hole (connections accepted,
// never answered) and restore: a database outage on demand.
import { connect, createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Drops every open connection and refuses new ones, like a stopped server. */
  readonly cut: () => void
  /** Drops every open connection and accepts new ones without ever answering, like a lost network. */
  readonly blackHole: () => void
  readonly restore: () => void
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  let mode: "up" | "cut" | "black-hole" = "up"
  const open = new Set<Socket>()
  const track = (s: Socket) => {
    open.add(s)
    s.on("close", () => open.delete(s))
    s.on("error", () => s.destroy())
  }
  const server = createServer((client) => {
    track(client)
    if (mode === "cut") return void client.destroy()
    if (mode === "black-hole") return
    const upstream = connect(target.port, target.host)
    track(upstream)
    client.pipe(upstream).pipe(client)
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const dropAll = () => {
    for (const s of open) s.destroy()
  }
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      mode = "cut"
      dropAll()
    },
    blackHole: () => {
      mode = "black-hole"
      dropAll()
    },
    restore: () => {
      mode = "up"
    },
    close: async () => {
      dropAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
