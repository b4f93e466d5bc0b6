// The subset of autocannon 8's API that the runner uses (bench/scenarios/load.ts, lifecycle.ts); the package ships no types.
declare module "autocannon" {
  namespace autocannon {
    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | undefined
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
    }
    interface Options {
      url: string
      connections?: number
      pipelining?: number
      duration?: number
      timeout?: number
      requests?: ReadonlyArray<Request>
    }
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      p50: number
      p90: number
      p99: number
    }
    interface Result {
      requests: Histogram
      latency: Histogram
      throughput: Histogram
      errors: number
      timeouts: number
      non2xx: number
      "2xx": number
      statusCodeStats?: Record<string, { count: number }>
      /** seconds from start to stop */
      duration: number
      /** times a request sequence was restarted because a setupRequest returned nothing */
      resets?: number
    }
    interface Instance {
      stop(): void
      on(event: "done", listener: (result: Result) => void): this
      /** fires right after the request's own onResponse, for every response (responseTime in ms) */
      on(event: "response", listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this
    }
  }
  function autocannon(options: autocannon.Options, callback: (err: unknown, result: autocannon.Result) => void): autocannon.Instance
  export default autocannon
}
