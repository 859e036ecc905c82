package api

// The general API information of the generated OpenAPI document (swag
// reads this comment; `make openapi` regenerates openapi/).

//	@title			mqgate HTTP API
//	@version		1
//	@description	mqgate is an HTTP/REST gateway in front of an embedded RocketMQ-style message engine stored in bbolt. Every error is application/problem+json (RFC 9457); every response carries X-Request-Id. Times are RFC 3339 in UTC with milliseconds.
//	@license.name	Apache-2.0
//	@license.url	https://www.apache.org/licenses/LICENSE-2.0
//	@BasePath		/
//	@securityDefinitions.apikey	BearerAuth
//	@in							header
//	@name						Authorization
//	@description				Authorization: Bearer <key>. Needed on every /v1 call only when the server runs with --api-keys; each key grants pub:<topic>, sub:<group> or admin (see docs/security.md).
//
// The tags (the sections of /docs, with their descriptions) are Tags below.

// Tag is one section of the API docs: the operations tagged with its name.
type Tag struct{ Name, Description string }

// Tags are the OpenAPI document's top-level tags, in the order /docs shows
// them; openapi/gen writes them (swag does not carry @tag lines into its
// output) and fails when an operation uses a tag not listed here.
var Tags = []Tag{
	{"topics", "Create, change, inspect and delete topics: named streams of messages split into queues."},
	{"messages", "Publish messages (one, or a batch stored all or nothing), read them back by id or key, and browse a queue without consuming it."},
	{"groups", "Consumer groups: which topics a group reads, from where, and how (CLUSTERING or BROADCASTING, CONCURRENTLY or ORDERLY, pull or webhook push); its offsets, lag and live status."},
	{"consuming", "Receive messages with a long poll and settle them: ack, nack (retry later) or extend the lease."},
	{"dead letters", "Messages that failed too often: list them, send them back to the group (redrive) or delete them (purge), as background jobs."},
	{"blocked keys", "ORDERLY groups: the sharding keys stuck behind a failing message, and how to skip, park or resume them."},
	{"operations", "Health and readiness probes, Prometheus metrics, backups, this document, the interactive docs and the web console."},
}
