// Command dashboard writes deploy/grafana/mqgate.json, the Grafana
// dashboard for mqgate's /metrics, built with the Grafana Foundation SDK
// (the dashboard is code: reviewed as code, generated, checked fresh by
// `make deploy-check`). docs/observability.md explains each panel.
//
//	go run ./dashboard -out ../grafana/mqgate.json
//	go run ./dashboard -check ../grafana/mqgate.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

func main() {
	out := flag.String("out", "", "write the dashboard JSON here")
	check := flag.String("check", "", "fail unless this file is what -out would write")
	flag.Parse()
	b, err := Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
	switch {
	case *out != "":
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "dashboard:", err)
			os.Exit(1)
		}
	case *check != "":
		old, err := os.ReadFile(*check)
		if err != nil || !bytes.Equal(old, b) {
			fmt.Fprintf(os.Stderr, "dashboard: %s is stale: run `make dashboard` and commit it (%v)\n", *check, err)
			os.Exit(1)
		}
	default:
		os.Stdout.Write(b)
	}
}

// ds is every panel's data source: the dashboard's datasource variable.
var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// sel is the selector every query carries: the job and instance chosen.
const sel = `job=~"$job",instance=~"$instance"`

// gsel adds the groups chosen.
const gsel = sel + `,group=~"$group"`

func q(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend).Datasource(ds)
}

func ts(title, desc, unit string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(ds).
		Height(8).Span(12).FillOpacity(10).Min(0).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeTable).Placement(common.LegendPlacementBottom).Calcs([]string{"mean", "max", "lastNotNull"}))
	for _, t := range targets {
		p = p.WithTarget(t)
	}
	return p
}

func single(title, desc, unit string, target *prometheus.DataqueryBuilder, thresholds ...dashboard.Threshold) *stat.PanelBuilder {
	p := stat.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(ds).Height(4).Span(6).WithTarget(target)
	if len(thresholds) > 0 {
		p = p.Thresholds(dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(thresholds))
	}
	return p
}

func step(v *float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: v, Color: color}
}

func variable(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(ds).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).IncludeAll(true).AllValue(".*")
}

// Build is the dashboard's JSON, indented, with a final newline.
func Build() ([]byte, error) {
	b := dashboard.NewDashboardBuilder("mqgate").
		Uid("mqgate-overview").
		Description("mqgate: publish and delivery rates, publish→ack latency, consumer lag, dead letters, webhooks and the store (docs/observability.md).").
		Tags([]string{"mqgate", "messaging"}).
		Refresh("30s").
		Time("now-3h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(variable("job", "Job", `label_values(mqgate_http_requests_total, job)`)).
		WithVariable(variable("instance", "Instance", `label_values(mqgate_http_requests_total{job=~"$job"}, instance)`)).
		WithVariable(variable("group", "Group", `label_values(mqgate_group_lag{job=~"$job",instance=~"$instance"}, group)`))

	b = b.WithRow(dashboard.NewRowBuilder("Overview")).
		WithPanel(single("Publish rate", "Messages accepted per second, all instances chosen.", "msg/s",
			q(`sum(rate(mqgate_published_messages_total{`+sel+`}[$__rate_interval]))`, "published"))).
		WithPanel(single("Ack rate", "Messages acked per second in the groups chosen.", "msg/s",
			q(`sum(rate(mqgate_settled_messages_total{`+gsel+`,result="acked"}[$__rate_interval]))`, "acked"))).
		WithPanel(single("Total lag", "Messages published and not yet acked or dead-lettered, in the groups chosen.", "short",
			q(`sum(mqgate_group_lag{`+gsel+`})`, "lag"))).
		WithPanel(single("Store commit", "1 while the store cannot commit (disk full, I/O error): publishes answer 503 and /readyz is 503.", "bool_yes_no",
			q(`max(mqgate_store_commit_failing{`+sel+`})`, "failing"), step(nil, "green"), step(cog.ToPtr(1.0), "red")))

	b = b.WithRow(dashboard.NewRowBuilder("Throughput")).
		WithPanel(ts("Publish rate", "Messages and bytes accepted by publish calls, per instance.", "msg/s",
			q(`sum by (instance) (rate(mqgate_published_messages_total{`+sel+`}[$__rate_interval]))`, "{{instance}}"))).
		WithPanel(ts("Publish calls by outcome", "Publish requests per second by kind (single, batch) and outcome (ok, error).", "reqps",
			q(`sum by (kind, outcome) (rate(mqgate_publish_requests_total{`+sel+`}[$__rate_interval]))`, "{{kind}} {{outcome}}"))).
		WithPanel(ts("Delivery rate by group", "Messages handed out per second (to receives, streams and webhook pushers); a redelivery counts again.", "msg/s",
			q(`sum by (group) (rate(mqgate_delivered_messages_total{`+gsel+`}[$__rate_interval]))`, "{{group}}"))).
		WithPanel(ts("Settle rate by group", "Acks and nacks per second (a lease that ran out counts as a nack).", "msg/s",
			q(`sum by (group, result) (rate(mqgate_settled_messages_total{`+gsel+`}[$__rate_interval]))`, "{{group}} {{result}}"))).
		WithPanel(ts("HTTP errors", "Answers per second with a 4xx or 5xx status, by status; 503 is a store that cannot commit or a shutdown, 429 a parked-receive limit or an API key over its limits.", "reqps",
			q(`sum by (status) (rate(mqgate_http_requests_total{`+sel+`,status=~"4..|5.."}[$__rate_interval]))`, "{{status}}"))).
		WithPanel(ts("Requests held or refused by API-key limits", "Requests per second that an API key's limits (docs/quotas.md) delayed (maxDelay) or rejected (429/413), by key and op; per instance on JetStream.", "reqps",
			q(`sum by (key, op, outcome) (rate(mqgate_quota_requests_total{`+sel+`,outcome!="allowed"}[$__rate_interval]))`, "{{key}} {{op}} {{outcome}}"))).
		WithPanel(ts("HTTP latency p99 by route", "99th percentile of request time by route pattern (long-poll receives include their wait).", "s",
			q(`histogram_quantile(0.99, sum by (le, route) (rate(mqgate_http_request_duration_seconds_bucket{`+sel+`}[$__rate_interval])))`, "{{route}}")))

	b = b.WithRow(dashboard.NewRowBuilder("Latency through the queue")).
		WithPanel(heatmap.NewPanelBuilder().Title("Publish→ack latency").
			Description("Distribution of the time from a message's first publish (bornAt) to its ack, in the groups chosen; delays and retries included.").
			Datasource(ds).Height(8).Span(12).Calculate(false).
			YAxis(heatmap.NewYAxisConfigBuilder().Unit("s")).
			Color(heatmap.NewHeatmapColorOptionsBuilder().Mode(heatmap.HeatmapColorModeScheme).Scheme("Spectral").Steps(64)).
			WithTarget(q(`sum by (le) (increase(mqgate_publish_to_ack_seconds_bucket{`+gsel+`}[$__rate_interval]))`, "{{le}}").
				Format(prometheus.PromQueryFormatHeatmap))).
		WithPanel(ts("Publish→ack p50 / p99 by group", "Median and 99th percentile of the time from publish to ack.", "s",
			q(`histogram_quantile(0.5, sum by (le, group) (rate(mqgate_publish_to_ack_seconds_bucket{`+gsel+`}[$__rate_interval])))`, "{{group}} p50"),
			q(`histogram_quantile(0.99, sum by (le, group) (rate(mqgate_publish_to_ack_seconds_bucket{`+gsel+`}[$__rate_interval])))`, "{{group}} p99"))).
		WithPanel(ts("Delivery→settle p99 by group", "99th percentile of the time a consumer holds a message before it acks or nacks it.", "s",
			q(`histogram_quantile(0.99, sum by (le, group, result) (rate(mqgate_delivery_to_settle_seconds_bucket{`+gsel+`}[$__rate_interval])))`, "{{group}} {{result}}")))

	b = b.WithRow(dashboard.NewRowBuilder("Consumer groups")).
		WithPanel(ts("Lag by group and topic", "Messages of the topic the group has not finished (acked or dead-lettered). A lag that only grows means consumers are slower than producers, or stopped.", "short",
			q(`sum by (group, topic) (mqgate_group_lag{`+gsel+`})`, "{{group}} / {{topic}}"))).
		WithPanel(ts("Oldest unacked message age", "Age of each group's oldest unfinished message: how far behind the group is, in time.", "s",
			q(`max by (group, topic) (mqgate_group_oldest_unacked_age_seconds{`+gsel+`})`, "{{group}} / {{topic}}"))).
		WithPanel(ts("Dead letters by group", "Dead letters waiting in each group's DLQ (%DLQ%group) for inspection or redrive.", "short",
			q(`sum by (group) (mqgate_dlq_depth{`+gsel+`})`, "{{group}}"))).
		WithPanel(ts("Retries, dead-lettering, redrives", "Messages per second sent to the retry topic, moved to a DLQ, and redriven from it.", "msg/s",
			q(`sum(rate(mqgate_retried_messages_total{`+sel+`}[$__rate_interval]))`, "retried"),
			q(`sum(rate(mqgate_dead_lettered_messages_total{`+sel+`}[$__rate_interval]))`, "dead-lettered"),
			q(`sum(rate(mqgate_redriven_messages_total{`+sel+`}[$__rate_interval]))`, "redriven")))

	b = b.WithRow(dashboard.NewRowBuilder("Webhooks")).
		WithPanel(ts("Webhook requests by outcome", "Webhook POSTs per second by group and outcome (success, status, redirect, throttled, timeout, connection, blocked, cancelled).", "reqps",
			q(`sum by (group, outcome) (rate(mqgate_webhook_requests_total{`+gsel+`}[$__rate_interval]))`, "{{group}} {{outcome}}"))).
		WithPanel(ts("Webhook failure ratio", "Share of webhook POSTs that did not succeed, by group.", "percentunit",
			q(`sum by (group) (rate(mqgate_webhook_requests_total{`+gsel+`,outcome!="success"}[$__rate_interval])) / sum by (group) (rate(mqgate_webhook_requests_total{`+gsel+`}[$__rate_interval]))`, "{{group}}"))).
		WithPanel(ts("Webhook latency p99", "99th percentile of the time a webhook receiver takes to answer, by group.", "s",
			q(`histogram_quantile(0.99, sum by (le, group) (rate(mqgate_webhook_request_duration_seconds_bucket{`+gsel+`}[$__rate_interval])))`, "{{group}}"))).
		WithPanel(ts("Webhooks in flight", "Webhook POSTs waiting for their answer, by group.", "short",
			q(`sum by (group) (mqgate_webhook_in_flight_requests{`+gsel+`})`, "{{group}}")))

	b = b.WithRow(dashboard.NewRowBuilder("Store")).
		WithPanel(ts("Disk", "The data file system's free space, the store file's size and the data in it (the file grows ahead of use and never shrinks; mqgate compact shrinks it).", "bytes",
			q(`min by (instance) (mqgate_data_fs_avail_bytes{`+sel+`})`, "{{instance}} free on the file system"),
			q(`max by (instance) (mqgate_store_file_bytes{`+sel+`})`, "{{instance}} store file"),
			q(`max by (instance) (mqgate_store_live_bytes{`+sel+`})`, "{{instance}} live data"))).
		WithPanel(ts("Data file system used", "Share of the data directory's file system in use; the store stops committing when it is full.", "percentunit",
			q(`1 - min by (instance) (mqgate_data_fs_avail_bytes{`+sel+`} / mqgate_data_fs_size_bytes{`+sel+`})`, "{{instance}}")).Max(1)).
		WithPanel(ts("Commit failures", "Group commits that failed per second (each failed its publishes with 503), and whether the store is failing now.", "short",
			q(`sum by (instance) (rate(mqgate_store_commit_failures_total{`+sel+`}[$__rate_interval]))`, "{{instance}} failures/s"),
			q(`max by (instance) (mqgate_store_commit_failing{`+sel+`})`, "{{instance}} failing"))).
		WithPanel(ts("Group commit", "Requests per group commit (how well one fsync is shared) and the mean fsync time of the log-ahead.", "short",
			q(`sum by (instance) (rate(mqgate_store_commit_requests_total{`+sel+`}[$__rate_interval])) / sum by (instance) (rate(mqgate_store_commit_groups_total{`+sel+`}[$__rate_interval]))`, "{{instance}} requests per commit"),
			q(`sum by (instance) (rate(mqgate_store_sync_seconds_total{`+sel+`}[$__rate_interval])) / sum by (instance) (rate(mqgate_store_syncs_total{`+sel+`}[$__rate_interval])) * 1000`, "{{instance}} ms per fsync"))).
		WithPanel(ts("Checkpoints and writeback", "Checkpoints per minute and the share of time the writer stood still for them (publishers wait meanwhile); a rising share means the store file's writeback falls behind.", "short",
			q(`sum by (instance) (rate(mqgate_store_checkpoints_total{`+sel+`}[$__rate_interval])) * 60`, "{{instance}} checkpoints/min"),
			q(`sum by (instance) (rate(mqgate_store_checkpoint_seconds_total{`+sel+`}[$__rate_interval]))`, "{{instance}} stalled share"))).
		WithPanel(ts("Segments and corrupt records", "Commit-log segments (retention frees a whole one at a time) and stored messages set aside for a failed checksum.", "short",
			q(`max by (instance) (mqgate_store_segments{`+sel+`})`, "{{instance}} segments"),
			q(`max by (instance) (mqgate_store_corrupt_records{`+sel+`})`, "{{instance}} corrupt records")))

	d, err := b.Build()
	if err != nil {
		return nil, err
	}
	number(&d)
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// number gives every panel and row its own id, and every query its refId
// (A, B, …), as Grafana's editor would: the SDK leaves panel ids unset and
// gives each row 0.
func number(d *dashboard.Dashboard) {
	var id uint32
	for i := range d.Panels {
		id++
		switch p := d.Panels[i]; {
		case p.Panel != nil:
			p.Panel.Id = cog.ToPtr(id)
			for k, t := range p.Panel.Targets {
				if pq, ok := t.(prometheus.Dataquery); ok {
					pq.RefId = cog.ToPtr(string(rune('A' + k)))
					p.Panel.Targets[k] = pq
				}
			}
		case p.RowPanel != nil:
			p.RowPanel.Id = id
		}
	}
}
