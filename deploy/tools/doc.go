// Package tools is the deploy/ tool module: the Helm chart, the Grafana
// dashboard and the Prometheus rules are built and checked with what it
// pins, kept out of the server's go.mod (helm's Kubernetes dependencies are
// large and only `make deploy-check` needs them).
//
//   - go tool helm, go tool kubeconform: helm lint / template and schema
//     validation of the rendered manifests (make deploy-check);
//   - k8sschema: standalone Kubernetes JSON schemas for kubeconform, made
//     from the ones the kubernetes-validate package (PyPI) ships;
//   - dashboard: deploy/grafana/mqgate.json, built with the Grafana
//     Foundation SDK and linted;
//   - chart_test.go: the rendered manifests carry the probes, limits,
//     security context and grace period the docs promise.
package tools
