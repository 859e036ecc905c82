// Command dashlint checks Grafana dashboards the way Grafana's
// dashboard-linter does (its rules, by the same names), which the Go
// module proxy does not serve; the schema part is the Grafana Foundation
// SDK's strict decoding and validation of the dashboard model.
//
//	dashlint [-promql-rules FILE] dashboard.json...
//
// -promql-rules writes every query, with the dashboard's variables
// substituted, as a Prometheus recording-rule file, so that
// `promtool check rules FILE` parses each one (target-promql-rule).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"sigs.k8s.io/yaml"
)

func main() {
	rulesOut := flag.String("promql-rules", "", "write the queries as a recording-rule file for promtool check rules")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: dashlint [-promql-rules FILE] dashboard.json...")
		os.Exit(2)
	}
	plugins.RegisterDefaultPlugins()
	var problems []string
	var exprs []string
	for _, f := range flag.Args() {
		raw, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dashlint:", err)
			os.Exit(1)
		}
		ps, es := Lint(raw)
		for _, p := range ps {
			problems = append(problems, f+": "+p)
		}
		exprs = append(exprs, es...)
	}
	if *rulesOut != "" {
		if err := writeRules(*rulesOut, exprs); err != nil {
			fmt.Fprintln(os.Stderr, "dashlint:", err)
			os.Exit(1)
		}
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("dashlint: %d dashboard(s), %d queries, no problems\n", flag.NArg(), len(exprs))
}

// panel is what the rules read of a panel (and of a row's panels).
type panel struct {
	ID          *int    `json:"id"`
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Datasource  *dsRef  `json:"datasource"`
	Panels      []panel `json:"panels"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Options struct {
		YAxis struct {
			Unit string `json:"unit"`
		} `json:"yAxis"`
	} `json:"options"`
	Targets []struct {
		Expr       string `json:"expr"`
		RefID      string `json:"refId"`
		Datasource *dsRef `json:"datasource"`
	} `json:"targets"`
}

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Datasource *dsRef `json:"datasource"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
}

var (
	// A metric selector: a name, and its matchers when there are any.
	selectorRe = regexp.MustCompile(`\b(mqgate_[a-z0-9_]+)(\{[^}]*\})?`)
	// A range function and its range.
	rangeRe = regexp.MustCompile(`\b(rate|irate|increase)\(([^\[]*)\[([^\]]*)\]`)
)

// Lint returns the problems of one dashboard and its PromQL queries.
func Lint(raw []byte) (problems, exprs []string) {
	add := func(rule, format string, args ...any) {
		problems = append(problems, rule+": "+fmt.Sprintf(format, args...))
	}
	var model dashboard.Dashboard
	if err := sdkErr(model.UnmarshalJSONStrict(raw)); err != nil {
		add("schema", "the dashboard does not decode strictly as Grafana's dashboard model: %v", err)
		return problems, nil
	}
	if err := sdkErr(model.Validate()); err != nil {
		add("schema", "%v", err)
	}
	var d struct {
		UID        string                    `json:"uid"`
		Title      string                    `json:"title"`
		Panels     []panel                   `json:"panels"`
		Templating struct{ List []variable } `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		add("schema", "%v", err)
		return problems, nil
	}
	if d.UID == "" || d.Title == "" {
		add("dashboard-uid-title-rule", "the dashboard needs a uid and a title (stable links, imports that update in place)")
	}

	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars["datasource"]; !ok || v.Type != "datasource" || v.Query != "prometheus" {
		add("template-datasource-rule", "want a datasource variable named datasource of type prometheus")
	}
	for _, name := range []string{"job", "instance"} {
		v, ok := vars[name]
		switch {
		case !ok:
			add("template-"+name+"-rule", "want a %s variable", name)
		case v.Type != "query" || v.Datasource == nil || v.Datasource.UID != "${datasource}" || !v.Multi || !v.IncludeAll:
			add("template-"+name+"-rule", "the %s variable must be a multi-value query on ${datasource} with All", name)
		}
	}

	ids := map[int]bool{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.ID == nil || ids[*p.ID] {
				add("panel-id-rule", "panel %q: a missing or repeated id", p.Title)
			} else {
				ids[*p.ID] = true
			}
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if p.Title == "" || p.Description == "" {
				add("panel-title-description-rule", "panel %q: want a title and a description", p.Title)
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				add("panel-datasource-rule", "panel %q: the data source must be ${datasource}", p.Title)
			}
			unit := p.FieldConfig.Defaults.Unit
			if p.Type == "heatmap" {
				unit = p.Options.YAxis.Unit
			}
			if unit == "" {
				add("panel-units-rule", "panel %q: no unit", p.Title)
			}
			if len(p.Targets) == 0 {
				add("panel-no-targets-rule", "panel %q: no queries", p.Title)
			}
			refs := map[string]bool{}
			for _, t := range p.Targets {
				if t.Datasource != nil && t.Datasource.UID != "${datasource}" {
					add("target-datasource-rule", "panel %q: a query on another data source", p.Title)
				}
				if t.RefID == "" || refs[t.RefID] {
					add("target-refid-rule", "panel %q: a missing or repeated refId", p.Title)
				}
				refs[t.RefID] = true
				lintExpr(p.Title, t.Expr, add)
				exprs = append(exprs, t.Expr)
			}
		}
	}
	walk(d.Panels)
	return problems, exprs
}

// lintExpr applies the target rules to one query.
func lintExpr(title, expr string, add func(rule, format string, args ...any)) {
	if strings.TrimSpace(expr) == "" {
		add("target-promql-rule", "panel %q: an empty query", title)
		return
	}
	for _, m := range selectorRe.FindAllStringSubmatch(expr, -1) {
		for _, want := range []string{`job=~"$job"`, `instance=~"$instance"`} {
			if !strings.Contains(m[2], want) {
				add("target-"+strings.Split(want, "=")[0]+"-rule", "panel %q: %s lacks %s", title, m[1], want)
			}
		}
	}
	for _, m := range rangeRe.FindAllStringSubmatch(expr, -1) {
		if m[3] != "$__rate_interval" {
			add("target-rate-interval-rule", "panel %q: %s over [%s]; use [$__rate_interval]", title, m[1], m[3])
		}
	}
	if strings.Count(expr, "(") != strings.Count(expr, ")") {
		add("target-promql-rule", "panel %q: unbalanced parentheses in %s", title, expr)
	}
}

// writeRules writes exprs as recording rules, Grafana's variables
// replaced by what Prometheus accepts, for promtool check rules.
func writeRules(file string, exprs []string) error {
	r := strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", `"$job"`, `".+"`, `"$instance"`, `".+"`, `"$group"`, `".+"`)
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	for i, e := range exprs {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i+1), Expr: r.Replace(e)})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard-queries", "rules": rules}}})
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// sdkErr is err, or nil for the SDK's empty error list (a typed nil that
// would compare non-nil).
func sdkErr(err error) error {
	if errs, ok := err.(cog.BuildErrors); ok && len(errs) == 0 {
		return nil
	}
	return err
}
