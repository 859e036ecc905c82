#!/usr/bin/env bash
# make deploy-check: the Helm chart, the Grafana dashboard and the
# Prometheus rules, checked with pinned tools from the package registries:
#   - helm and kubeconform: Go tools of deploy/tools/go.mod (go tool);
#   - the Kubernetes JSON schemas: the kubernetes-validate package (PyPI),
#     made standalone for kubeconform by deploy/tools/k8sschema;
#   - promtool: Debian's prometheus package (.ci/run installs it).
# Nothing is downloaded at run time besides those packages.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=${TOOLS:-.tools}
OUT=${DEPLOY_OUT:-build/deploy}
K8S_VERSION=1.33.0                  # the schemas the manifests are validated against
KUBERNETES_VALIDATE_VERSION=1.37.0  # ships schemas for Kubernetes 1.25 .. 1.37

if ! command -v promtool >/dev/null 2>&1; then
  echo "deploy-check: promtool not found; install Debian's prometheus package (apt-get install --no-install-recommends prometheus)" >&2
  exit 1
fi

venv="$TOOLS/k8s-venv"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('kubernetes-validate') != '$KUBERNETES_VALIDATE_VERSION')" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi
schemas_src=$("$venv/bin/python" -c "import kubernetes_validate, os; print(os.path.join(os.path.dirname(kubernetes_validate.__file__), 'kubernetes-json-schema', 'v$K8S_VERSION-local-strict'))")

rm -rf "$OUT" && mkdir -p "$OUT"
out=$(realpath "$OUT")
chart=$(realpath deploy/helm/mqgate)
cd deploy/tools

echo "== go vet, go test (chart manifests pinned, dashboard fresh, dashlint)"
go vet ./...
go test -count=1 ./...

echo "== helm lint"
go tool helm lint --strict "$chart" --set insecureOpen=true
go tool helm lint --strict "$chart" --set mode=jetstream,replicaCount=3,insecureOpen=true

echo "== helm template"
go tool helm template mqgate "$chart" --namespace mq --set insecureOpen=true >"$out/embedded.yaml"
go tool helm template mqgate "$chart" --namespace mq --set mode=jetstream,replicaCount=3,insecureOpen=true >"$out/jetstream.yaml"
go tool helm template mqgate "$chart" --namespace mq \
  --set mode=jetstream,replicaCount=2,tls.existingSecret=mqgate-tls,apiKeys.existingSecret=mqgate-keys,jetstream.credsSecret=nats-creds \
  --set shutdown.method=preStopSleep,serviceMonitor.enabled=true,resources.limits.memory=2Gi >"$out/jetstream-options.yaml"
go tool helm template mqgate "$chart" --namespace mq \
  --set tls.existingSecret=mqgate-tls,apiKeys.existingSecret=mqgate-keys,serviceMonitor.enabled=true >"$out/embedded-options.yaml"
if go tool helm template mqgate "$chart" >/dev/null 2>"$out/open.err"; then
  echo "deploy-check: rendered without apiKeys.existingSecret or insecureOpen" >&2
  exit 1
fi
grep -q insecureOpen "$out/open.err"
if go tool helm template mqgate "$chart" --set replicaCount=2,insecureOpen=true >/dev/null 2>"$out/replicas.err"; then
  echo "deploy-check: embedded mode rendered with replicaCount=2" >&2
  exit 1
fi
grep -q single-writer "$out/replicas.err"

echo "== kubeconform (Kubernetes $K8S_VERSION, strict)"
go run ./k8sschema -src "$schemas_src" -out "$out/schemas" "$out"/*.yaml
# ServiceMonitor is prometheus-operator's CRD (no built-in schema): the
# chart tests check its fields.
go tool kubeconform -strict -summary -skip ServiceMonitor \
  -schema-location "$out/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out"/*.yaml

echo "== dashboard lint"
go run ./dashlint -promql-rules "$out/dashboard-queries.yml" ../grafana/*.json
promtool check rules "$out/dashboard-queries.yml"

echo "== alerting rules"
cd ../prometheus
promtool check rules mqgate-alerts.yml
promtool test rules mqgate-alerts.test.yml
