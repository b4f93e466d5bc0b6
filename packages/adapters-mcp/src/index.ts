export * from "./backend.ts"
export * from "./server.ts"
export * from "./tools.ts"
export * from "./http.ts"
