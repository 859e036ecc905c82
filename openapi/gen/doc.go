// Command gen regenerates mqgate's OpenAPI documents: it runs swag (pinned
// as a Go tool in go.mod) over api/ to get Swagger 2, converts that to
// OpenAPI 3 with kin-openapi, marks every error answer as
// application/problem+json (Swagger 2 cannot say so per response),
// validates the result and writes swagger.json and openapi.json.
//
//	go run ./openapi/gen -out openapi          # make openapi
//	go run ./openapi/gen -out "$tmp" -check openapi   # make openapi-check
//
// With -check it also compares the fresh files with the committed ones and
// exits 1 when they differ.
//
// What it owns: the generation pipeline only; the annotations it reads
// live on api's handlers and types, and the documents it writes belong to
// package openapi. It must not import any mqgate package: swag reads api/
// as source, so the generator never links the server.
//
// Invariants: the output is deterministic (encoding/json writes map keys
// sorted, indentation is fixed) so that -check can compare bytes; the
// documents are never edited by hand. It runs from the module root (the
// make targets do), since swag's --dir api is relative.
package main
