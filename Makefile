# mqgate — build, test and generate. `make help` lists the targets.

GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# -race needs cgo and a C compiler; `make test RACE=` runs without it.
RACE    ?= -race

# Pinned tools for the OpenAPI conformance checks (`make conformance`),
# installed into $(TOOLS) by their ordinary clients (npm, pip).
TOOLS               ?= .tools
# @redocly/cli 2.x needs Node 20+; distributions with Node 18 (Debian 12)
# get 1.34.20, which lints this document the same (0 errors, 0 warnings).
REDOCLY_VERSION     := $(shell [ "$$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 20 ] && echo 2.77.0 || echo 1.34.20)
SCHEMATHESIS_VERSION := 4.32.5
REDOCLY             := $(TOOLS)/node_modules/.bin/redocly
SCHEMATHESIS        := $(TOOLS)/venv/bin/schemathesis

.PHONY: help build run test vet unit openapi openapi-check client client-check bench clean conformance openapi-lint api-fuzz tools console-test

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

conformance: openapi-lint api-fuzz ## the OpenAPI document against linters and the real server (redocly, Schemathesis)

openapi-lint: $(REDOCLY) ## redocly lint openapi/openapi.json: 0 errors, 0 warnings (rules in openapi/redocly.yaml)
	$(REDOCLY) lint --config openapi/redocly.yaml --max-problems 50 openapi/openapi.json

api-fuzz: $(SCHEMATHESIS) ## Schemathesis, all checks and phases, fixed seed, against bin/mqgate on 127.0.0.1 (exclusions: openapi/schemathesis.toml)
	CGO_ENABLED=0 $(GO) build -o $(BIN)/mqgate ./cmd/mqgate
	openapi/fuzz.sh $(BIN)/mqgate $(SCHEMATHESIS)

tools: $(REDOCLY) $(SCHEMATHESIS) ## install the pinned redocly and Schemathesis into $(TOOLS)

$(REDOCLY):
	npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error @redocly/cli@$(REDOCLY_VERSION)

$(SCHEMATHESIS):
	python3 -m venv $(TOOLS)/venv
	$(TOOLS)/venv/bin/pip install --quiet --disable-pip-version-check schemathesis==$(SCHEMATHESIS_VERSION)

clean: ## remove build output
	rm -rf $(BIN) build
