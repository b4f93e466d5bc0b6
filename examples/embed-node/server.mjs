// A plain Node HTTP service with routes of its own that mounts mes under /mes: no Effect code here, mes is a
// web-standard request handler (createMesHandler of @mes/cli) over DATABASE_URL, else the embedded database.
import { createServer } from "node:http"
import { createMesHandler } from "@mes/cli"

const PREFIX = "/mes"
const mes = createMesHandler()

const readBody = async (req) => {
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  return Buffer.concat(chunks)
}

const server = createServer(async (req, res) => {
  // the service's own routes
  if (req.url === "/hello") {
    res.writeHead(200, { "content-type": "text/plain" })
    return res.end("hello from my service\n")
  }
  // everything under /mes goes to mes, with the prefix taken off (mes answers /functions/v1/...)
  if (req.url.startsWith(`${PREFIX}/`)) {
    const url = new URL(req.url.slice(PREFIX.length), `http://${req.headers.host}`)
    const headers = Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]))
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req)
    const response = await mes.handler(new Request(url, { method: req.method, headers, body }))
    res.writeHead(response.status, Object.fromEntries(response.headers))
    return res.end(Buffer.from(await response.arrayBuffer()))
  }
  res.writeHead(404, { "content-type": "text/plain" })
  res.end("not found\n")
})

server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port} (mes under ${PREFIX}/functions/v1)`)
})
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => mes.dispose().then(() => process.exit(0))))
}
