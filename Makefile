# mqgate — build, test and generate. `make help` lists the targets.

GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# -race needs cgo and a C compiler; `make test RACE=` runs without it.
RACE    ?= -race

.PHONY: help build run test vet unit openapi openapi-check client client-check bench clean console-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## static binaries in bin/ (mqgate, mqbench)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/mqgate ./cmd/mqgate
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/mqbench ./cmd/mqbench

run: ## run the server on :8080 with data in ./data
	$(GO) run ./cmd/mqgate serve

test: vet openapi-check client-check unit ## everything CI runs: vet, OpenAPI and client freshness, unit + e2e tests with -race

vet: ## go vet and a gofmt check
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

unit: ## unit and end-to-end tests (e2e builds the real binary once)
	$(GO) test $(RACE) -timeout 15m ./...

openapi: ## regenerate openapi/swagger.json and openapi/openapi.json from the annotations in api/
	$(GO) run ./openapi/gen -out openapi

openapi-check: ## fail when the committed OpenAPI documents are stale (and validate them)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(GO) run ./openapi/gen -out "$$tmp" -check openapi

client: ## regenerate the Go client apiclient/client.gen.go from openapi/openapi.json (oapi-codegen, a Go tool in go.mod)
	cd apiclient && $(GO) generate .

client-check: ## fail when the committed Go client is stale against openapi/openapi.json
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  $(GO) tool oapi-codegen -config apiclient/oapi-codegen.yaml -o "$$tmp/client.gen.go" openapi/openapi.json && \
	  if ! cmp -s "$$tmp/client.gen.go" apiclient/client.gen.go; then \
	    echo "apiclient/client.gen.go is stale: run \`make client\` and commit it"; exit 1; fi

bench: ## issue-2 publish figures: gateway vs bare-HTTP baseline, 1 KiB, 64 clients, single and batch-of-100
	$(GO) build -o $(BIN)/mqbench ./cmd/mqbench
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/mqgate ./cmd/mqgate
	$(BIN)/mqbench compare --url "" --gateway-bin $(BIN)/mqgate --size 1024 --concurrency 64 --batch 1   --duration 10s --warmup 2s --runs 3
	$(BIN)/mqbench compare --url "" --gateway-bin $(BIN)/mqgate --size 1024 --concurrency 64 --batch 100 --duration 10s --warmup 2s --runs 3

console-test: ## drive the web console in Chromium (Playwright, console/browser); screenshots in build/console-screenshots
	$(GO) build -race -o $(BIN)/mqgate-console ./cmd/mqgate
	cd console/browser && npm ci --no-audit --no-fund
	MQGATE_BIN=$(CURDIR)/$(BIN)/mqgate-console node console/browser/run.mjs

clean: ## remove build output
	rm -rf $(BIN) build
