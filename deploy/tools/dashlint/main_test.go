package main

import (
	"os"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
)

// TestLintCatches: the committed dashboard is clean, and each kind of
// mistake in it is reported under its rule.
func TestLintCatches(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	raw, err := os.ReadFile("../../grafana/mqgate.json")
	if err != nil {
		t.Fatal(err)
	}
	if ps, exprs := Lint(raw); len(ps) > 0 || len(exprs) < 20 {
		t.Fatalf("the committed dashboard: %d queries, problems %v", len(exprs), ps)
	}
	for rule, mutate := range map[string]func(string) string{
		"schema": func(s string) string {
			return strings.Replace(s, `"refresh": "30s"`, `"refresh": "30s", "refreshh": 1`, 1)
		},
		"target-rate-interval-rule": func(s string) string {
			return strings.Replace(s, `[$__rate_interval]))",`, `[5m]))",`, 1)
		},
		"target-job-rule": func(s string) string { return strings.Replace(s, `{job=~\"$job\",`, `{`, 1) },
		"panel-title-description-rule": func(s string) string {
			return strings.Replace(s, `"description": "Messages accepted per second, all instances chosen."`, `"description": ""`, 1)
		},
		"panel-datasource-rule": func(s string) string {
			i := strings.Index(s, `"title": "Publish rate"`)
			return s[:i] + strings.Replace(s[i:], `"uid": "${datasource}"`, `"uid": "prom-1"`, 1)
		},
		"panel-units-rule":         func(s string) string { return strings.Replace(s, `"unit": "msg/s"`, `"unit": ""`, 1) },
		"template-datasource-rule": func(s string) string { return strings.Replace(s, `"query": "prometheus"`, `"query": "loki"`, 1) },
		"panel-id-rule":            func(s string) string { return strings.Replace(s, `"id": 3,`, `"id": 2,`, 1) },
	} {
		m := mutate(string(raw))
		if m == string(raw) {
			t.Fatalf("%s: the mutation changed nothing", rule)
		}
		ps, _ := Lint([]byte(m))
		found := false
		for _, p := range ps {
			found = found || strings.HasPrefix(p, rule+":")
		}
		if !found {
			t.Errorf("%s: not reported; got %v", rule, ps)
		}
	}
}
