// @mes/client: typed clients of the mes REST API (issue 13). Work in progress.
export {}
