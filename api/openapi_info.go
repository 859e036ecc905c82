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
//	@tag.name		topics
//	@tag.description	Create, inspect and delete topics.
//	@tag.name		messages
//	@tag.description	Publish messages, read them by id or key, browse queues.
//	@tag.name		operations
//	@tag.description	Health, readiness, metrics and documentation.
