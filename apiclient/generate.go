package apiclient

// The client is generated from the committed OpenAPI 3 document, which is
// itself generated from the handler annotations in api/ (`make openapi`).
// oapi-codegen is pinned as a Go tool in go.mod.
//
//go:generate go tool oapi-codegen -config oapi-codegen.yaml -o client.gen.go ../openapi/openapi.json
