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

# Pinned SDK generators (`make sdk`): openapi-python-client and pytest in
# their own venv under $(TOOLS); openapi-typescript, openapi-fetch and tsc
# from clients/typescript/package-lock.json (npm ci, node_modules not committed).
OPENAPI_PYTHON_CLIENT_VERSION := 0.29.1
PYTEST_VERSION                := 9.2.0
SDK_VENV            := $(TOOLS)/sdk-venv
OPC                 := $(SDK_VENV)/bin/openapi-python-client
PY_SDK              := clients/python/mqgate-client
PY_STREAM           := clients/python/mqgate-stream
TS_SDK              := clients/typescript
TS_MODULES          := $(TS_SDK)/node_modules/.bin/openapi-typescript

.PHONY: help mqgate build run test vet unit openapi openapi-check client client-check bench clean conformance openapi-lint api-fuzz tools console-test deploy-check dashboard \
	sdk sdk-python sdk-typescript sdk-ci sdk-check sdk-python-check sdk-typescript-check sdk-test sdk-python-test sdk-typescript-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

mqgate: ## the gateway alone, bin/mqgate (what `go install ./cmd/mqgate` puts in $(go env GOPATH)/bin)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/mqgate ./cmd/mqgate

build: ## static binaries in bin/ (mqgate, mqbench)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/mqgate ./cmd/mqgate
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/mqbench ./cmd/mqbench

run: ## run the server on 127.0.0.1:8080 with data in ./data
	$(GO) run ./cmd/mqgate serve

test: vet openapi-check client-check unit ## everything CI runs: vet, OpenAPI and client freshness, unit + e2e tests with -race

vet: ## go vet and a gofmt check
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

unit: ## unit and end-to-end tests (e2e builds the real binary once)
	$(GO) test $(RACE) -timeout 30m ./...

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

console-test: ## drive the web console in Chromium (Playwright, console/browser), on embedded and on two JetStream gateways; screenshots in build/console-screenshots
	$(GO) build -race -o $(BIN)/mqgate-console ./cmd/mqgate
	$(GO) build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2
	cd console/browser && npm ci --no-audit --no-fund
	MQGATE_BIN=$(CURDIR)/$(BIN)/mqgate-console node console/browser/run.mjs
	MQGATE_BIN=$(CURDIR)/$(BIN)/mqgate-console NATS_BIN=$(CURDIR)/$(BIN)/nats-server node console/browser/jetstream.mjs

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

sdk: sdk-python sdk-typescript ## regenerate both SDKs in clients/ from openapi/openapi.json

sdk-python: $(OPC) ## regenerate the Python SDK clients/python/mqgate-client (openapi-python-client)
	$(OPC) generate --path openapi/openapi.json --meta setup --config clients/python/openapi-python-client.yaml \
	  --output-path $(PY_SDK) --overwrite

sdk-typescript: $(TS_MODULES) ## regenerate the TypeScript types clients/typescript/schema.d.ts (openapi-typescript)
	cd $(TS_SDK) && node_modules/.bin/openapi-typescript ../../openapi/openapi.json -o schema.d.ts

sdk-check: sdk-python-check sdk-typescript-check ## fail when a committed SDK is stale against openapi/openapi.json

sdk-python-check: $(OPC)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  $(OPC) generate --path openapi/openapi.json --meta setup --config clients/python/openapi-python-client.yaml \
	    --output-path "$$tmp/out" >/dev/null && \
	  if ! diff -r -x __pycache__ "$$tmp/out" $(PY_SDK) >/dev/null; then \
	    diff -r -x __pycache__ "$$tmp/out" $(PY_SDK) | head -20; \
	    echo "$(PY_SDK) is stale: run \`make sdk-python\` and commit it"; exit 1; fi

sdk-typescript-check: $(TS_MODULES)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  $(TS_SDK)/node_modules/.bin/openapi-typescript openapi/openapi.json -o "$$tmp/schema.d.ts" >/dev/null 2>&1 && \
	  if ! cmp -s "$$tmp/schema.d.ts" $(TS_SDK)/schema.d.ts; then \
	    echo "$(TS_SDK)/schema.d.ts is stale: run \`make sdk-typescript\` and commit it"; exit 1; fi

sdk-test: sdk-python-test sdk-typescript-test ## each SDK's live round trip against bin/mqgate on 127.0.0.1

sdk-ci: sdk-check sdk-test ## what CI runs after make test: SDK freshness and both round trips (installs pinned tools)

sdk-python-test: $(OPC)
	CGO_ENABLED=0 $(GO) build -o $(BIN)/mqgate ./cmd/mqgate
	@# installed from a copy: a build in place leaves build/ and *.egg-info next to the generated code
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cp -r $(PY_SDK) $(PY_STREAM) "$$tmp/" && \
	  $(SDK_VENV)/bin/pip install --quiet --disable-pip-version-check "$$tmp/$(notdir $(PY_SDK))" "$$tmp/$(notdir $(PY_STREAM))"
	PYTHONDONTWRITEBYTECODE=1 clients/with-server.sh $(BIN)/mqgate $(SDK_VENV)/bin/python -m pytest -p no:cacheprovider -v clients/python/test_roundtrip.py clients/python/test_stream.py

sdk-typescript-test: $(TS_MODULES)
	CGO_ENABLED=0 $(GO) build -o $(BIN)/mqgate ./cmd/mqgate
	cd $(TS_SDK) && node_modules/.bin/tsc -p tsconfig.json
	clients/with-server.sh $(BIN)/mqgate node --test $(TS_SDK)/roundtrip.test.js $(TS_SDK)/stream.test.js

$(OPC):
	python3 -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install --quiet --disable-pip-version-check \
	  openapi-python-client==$(OPENAPI_PYTHON_CLIENT_VERSION) pytest==$(PYTEST_VERSION)

$(TS_MODULES): $(TS_SDK)/package-lock.json
	npm ci --prefix $(TS_SDK) --no-audit --no-fund --loglevel=error
	@touch $@

deploy-check: ## Helm chart (lint, template, kubeconform, pinned manifest tests), Grafana dashboard (fresh, linted), alert rules (promtool check + test)
	TOOLS=$(TOOLS) bash deploy/check.sh

dashboard: ## regenerate deploy/grafana/mqgate.json from deploy/tools/dashboard (Grafana Foundation SDK)
	cd deploy/tools && $(GO) run ./dashboard -out ../grafana/mqgate.json

clean: ## remove build output
	rm -rf $(BIN) build
