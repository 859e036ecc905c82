package tools

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

const chartDir = "../helm/mqgate"

// rendered is one `helm template` of the chart, split by kind.
type rendered struct {
	docs  map[string][]string // kind -> YAML documents
	notes string              // NOTES.txt as helm install prints it
}

// render renders the chart with vals, as helm template does (its own
// engine and values, no cluster). Values that name neither API keys nor
// insecureOpen get insecureOpen: true, which the chart requires of an
// open /v1 (TestChartOpenOnlyOnPurpose renders without it).
func render(t *testing.T, vals map[string]any) (*rendered, error) {
	t.Helper()
	_, keys := vals["apiKeys"]
	if _, open := vals["insecureOpen"]; !keys && !open {
		withOpen := map[string]any{"insecureOpen": true}
		for k, v := range vals {
			withOpen[k] = v
		}
		vals = withOpen
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "t", Namespace: "mq", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	r := &rendered{docs: map[string][]string{}}
	for name, body := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.notes = body
		}
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(body, "\n---") {
			var meta struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if meta.Kind != "" {
				r.docs[meta.Kind] = append(r.docs[meta.Kind], doc)
			}
		}
	}
	return r, nil
}

func mustRender(t *testing.T, vals map[string]any) *rendered {
	t.Helper()
	r, err := render(t, vals)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// one decodes the only document of kind into v (strictly: a field the Go
// type lacks is an error, as the API server's strict decoding would be).
func (r *rendered) one(t *testing.T, kind string, v any) {
	t.Helper()
	if n := len(r.docs[kind]); n != 1 {
		t.Fatalf("%d %s documents, want 1 (kinds: %v)", n, kind, r.kinds())
	}
	if err := yaml.UnmarshalStrict([]byte(r.docs[kind][0]), v); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
}

func (r *rendered) kinds() []string {
	var ks []string
	for k := range r.docs {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// dockerfile is what the image promises: its user and the ENV defaults.
type dockerfile struct {
	uid, gid int64
	env      map[string]string
	expose   string
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := dockerfile{env: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(bytes.ReplaceAll(raw, []byte("\\\n"), nil)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "USER":
			u, g, _ := strings.Cut(f[1], ":")
			d.uid, _ = strconv.ParseInt(u, 10, 64)
			d.gid, _ = strconv.ParseInt(g, 10, 64)
		case "ENV":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				d.env[k] = v
			}
		case "EXPOSE":
			d.expose = f[1]
		}
	}
	if d.uid == 0 {
		t.Fatal("the Dockerfile has no numeric non-root USER")
	}
	return d
}

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// checkPod pins what every mode's pod carries: probes on /readyz and
// /healthz, resources with GOMEMLIMIT derived from the memory limit, the
// non-root read-only security context (the Dockerfile's uid), and a grace
// period covering --shutdown-delay + --shutdown-timeout.
func checkPod(t *testing.T, spec corev1.PodSpec, scheme corev1.URIScheme, delay, timeout, closeS int64, memLimit string, memPercent int64) {
	t.Helper()
	d := readDockerfile(t)
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	probe := func(name string, p *corev1.Probe, path string) {
		t.Helper()
		if p == nil || p.HTTPGet == nil {
			t.Fatalf("no %s probe", name)
		}
		if p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "http" || p.HTTPGet.Scheme != scheme {
			t.Fatalf("%s probe %+v, want %s %s on port http", name, p.HTTPGet, scheme, path)
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("startup", c.StartupProbe, "/healthz")
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || strconv.Itoa(int(c.Ports[0].ContainerPort)) != d.expose {
		t.Fatalf("ports %+v, want http on the Dockerfile's EXPOSE %s", c.Ports, d.expose)
	}

	lim, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok || lim.String() != memLimit {
		t.Fatalf("memory limit %v, want %s", c.Resources.Limits, memLimit)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Fatalf("requests %v: want cpu and memory", c.Resources.Requests)
	}
	env := envOf(c)
	q := resource.MustParse(memLimit)
	want := q.Value() * memPercent / 100
	if got, err := strconv.ParseInt(env["GOMEMLIMIT"], 10, 64); err != nil || got < want-1 || got > want {
		t.Fatalf("GOMEMLIMIT %q, want %d (%d%% of %s)", env["GOMEMLIMIT"], want, memPercent, memLimit)
	}
	if env["MQGATE_ADDR"] != ":"+d.expose {
		t.Fatalf("MQGATE_ADDR %q, want :%s", env["MQGATE_ADDR"], d.expose)
	}

	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != d.uid ||
		psc.RunAsGroup == nil || *psc.RunAsGroup != d.gid || psc.FSGroup == nil || *psc.FSGroup != d.gid {
		t.Fatalf("pod security context %+v: want non-root as the Dockerfile's %d:%d, fsGroup %d", psc, d.uid, d.gid, d.gid)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Fatalf("container security context %+v: want a read-only root, no privilege escalation, all capabilities dropped", sc)
	}

	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds != delay+timeout+closeS {
		t.Fatalf("terminationGracePeriodSeconds %v, want %d (delay %d + timeout %d + close %d)", spec.TerminationGracePeriodSeconds, delay+timeout+closeS, delay, timeout, closeS)
	}
	args := strings.Join(c.Args, " ")
	binDelay := delay
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		if c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds != delay {
			t.Fatalf("preStop %+v, want a sleep of %d s", c.Lifecycle.PreStop, delay)
		}
		binDelay = 0
	}
	for _, a := range []string{fmt.Sprintf("--shutdown-delay=%ds", binDelay), fmt.Sprintf("--shutdown-timeout=%ds", timeout)} {
		if !strings.Contains(args, a) {
			t.Fatalf("args %q lack %s", args, a)
		}
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Fatal("the service account token is mounted; mqgate calls no Kubernetes API")
	}
}

func checkService(t *testing.T, r *rendered, podLabels map[string]string) {
	t.Helper()
	for _, doc := range r.docs["Service"] {
		var svc corev1.Service
		if err := yaml.UnmarshalStrict([]byte(doc), &svc); err != nil {
			t.Fatal(err)
		}
		for k, v := range svc.Spec.Selector {
			if podLabels[k] != v {
				t.Fatalf("Service %s selects %s=%s, which the pods lack (%v)", svc.Name, k, v, podLabels)
			}
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" {
			t.Fatalf("Service %s ports %+v", svc.Name, svc.Spec.Ports)
		}
	}
}

func TestChartEmbedded(t *testing.T) {
	r := mustRender(t, nil)
	var sts appsv1.StatefulSet
	r.one(t, "StatefulSet", &sts)
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 {
		t.Fatalf("replicas %v, want 1", sts.Spec.Replicas)
	}
	checkPod(t, sts.Spec.Template.Spec, corev1.URISchemeHTTP, 5, 30, 10, "512Mi", 90)
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" ||
		sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "10Gi" {
		t.Fatalf("volume claims %+v", sts.Spec.VolumeClaimTemplates)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	d := readDockerfile(t)
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != "data" || c.VolumeMounts[0].MountPath != d.env["MQGATE_DATA"] || envOf(c)["MQGATE_DATA"] != d.env["MQGATE_DATA"] {
		t.Fatalf("mounts %+v: want the claim at the Dockerfile's MQGATE_DATA %s", c.VolumeMounts, d.env["MQGATE_DATA"])
	}
	if sts.Spec.ServiceName == "" || len(r.docs["Service"]) != 2 {
		t.Fatalf("serviceName %q with %d Services", sts.Spec.ServiceName, len(r.docs["Service"]))
	}
	checkService(t, r, sts.Spec.Template.Labels)
	for _, k := range []string{"Deployment", "PodDisruptionBudget", "Secret", "ServiceMonitor"} {
		if len(r.docs[k]) != 0 {
			t.Fatalf("embedded renders a %s", k)
		}
	}
}

// TestChartEmbeddedRefusesReplicas: the single-writer store is never
// scaled by the chart.
func TestChartEmbeddedRefusesReplicas(t *testing.T) {
	_, err := render(t, map[string]any{"replicaCount": 2})
	if err == nil || !strings.Contains(err.Error(), "single-writer") {
		t.Fatalf("replicaCount 2 in embedded mode: %v, want a refusal naming the single-writer store", err)
	}
	if notes := mustRender(t, nil).notes; !strings.Contains(notes, "WARNING") || !strings.Contains(notes, "single-writer") {
		t.Fatalf("embedded NOTES.txt carries no single-writer warning:\n%s", notes)
	}
	if notes := mustRender(t, map[string]any{"mode": "jetstream"}).notes; strings.Contains(notes, "WARNING") {
		t.Fatalf("jetstream NOTES.txt warns:\n%s", notes)
	}
}

func TestChartJetStream(t *testing.T) {
	r := mustRender(t, map[string]any{"mode": "jetstream", "replicaCount": 3})
	var dep appsv1.Deployment
	r.one(t, "Deployment", &dep)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 3 {
		t.Fatalf("replicas %v, want 3", dep.Spec.Replicas)
	}
	spec := dep.Spec.Template.Spec
	checkPod(t, spec, corev1.URISchemeHTTP, 5, 30, 10, "512Mi", 90)
	c := spec.Containers[0]
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, "--backend=jetstream") || !strings.Contains(args, "--handle-key-file=/etc/mqgate/handle/handle.key") {
		t.Fatalf("args %q", args)
	}
	var sec corev1.Secret
	r.one(t, "Secret", &sec)
	if k := string(sec.Data["handle.key"]); !regexp.MustCompile(`^[0-9a-f]{64,}$`).MatchString(k) {
		t.Fatalf("generated handle key %q: want 64+ hex digits", k)
	}
	if sec.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Fatal("the handle-key Secret would be deleted with the release")
	}
	mounted := false
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == sec.Name {
			mounted = true
		}
	}
	if !mounted {
		t.Fatalf("the handle-key Secret %s is not mounted: %+v", sec.Name, spec.Volumes)
	}
	var pdb policyv1.PodDisruptionBudget
	r.one(t, "PodDisruptionBudget", &pdb)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Fatalf("PDB %+v", pdb.Spec)
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Fatalf("the PDB selects %s=%s, which the pods lack", k, v)
		}
	}
	checkService(t, r, dep.Spec.Template.Labels)
	if len(r.docs["StatefulSet"])+len(r.docs["ServiceMonitor"]) != 0 {
		t.Fatalf("kinds %v", r.kinds())
	}
}

// TestChartOptions: TLS (probes over HTTPS), the kubelet's preStop sleep
// instead of --shutdown-delay, other limits, the ServiceMonitor.
func TestChartOptions(t *testing.T) {
	r := mustRender(t, map[string]any{
		"mode": "jetstream", "replicaCount": 2,
		"tls":               map[string]any{"existingSecret": "mqgate-tls"},
		"apiKeys":           map[string]any{"existingSecret": "mqgate-keys"},
		"shutdown":          map[string]any{"method": "preStopSleep", "delaySeconds": 10, "timeoutSeconds": 60, "closeSeconds": 5},
		"resources":         map[string]any{"limits": map[string]any{"memory": "2Gi"}},
		"goMemLimitPercent": 80,
		"serviceMonitor":    map[string]any{"enabled": true},
		"jetstream":         map[string]any{"handleKey": map[string]any{"value": strings.Repeat("ab", 32)}},
	})
	var dep appsv1.Deployment
	r.one(t, "Deployment", &dep)
	checkPod(t, dep.Spec.Template.Spec, corev1.URISchemeHTTPS, 10, 60, 5, "2Gi", 80)
	c := dep.Spec.Template.Spec.Containers[0]
	if env := envOf(c); env["MQGATE_TLS_CERT"] == "" || env["MQGATE_TLS_KEY"] == "" {
		t.Fatalf("TLS env %v", env)
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--api-keys=/etc/mqgate/keys/keys.json") {
		t.Fatalf("args %q", c.Args)
	}
	var sec corev1.Secret
	r.one(t, "Secret", &sec)
	if string(sec.Data["handle.key"]) != strings.Repeat("ab", 32) {
		t.Fatal("the given handle key is not the Secret's")
	}
	var sm struct {
		Spec struct {
			Endpoints []struct{ Port, Path, Scheme string }
		}
	}
	if len(r.docs["ServiceMonitor"]) != 1 || yaml.Unmarshal([]byte(r.docs["ServiceMonitor"][0]), &sm) != nil ||
		len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" || sm.Spec.Endpoints[0].Scheme != "https" {
		t.Fatalf("ServiceMonitor %+v", sm)
	}
	for _, bad := range []map[string]any{
		{"mode": "kafka"},
		{"shutdown": map[string]any{"method": "sleep"}},
		{"mode": "jetstream", "jetstream": map[string]any{"handleKey": map[string]any{"value": "short"}}},
		{"resources": map[string]any{"limits": map[string]any{"memory": "lots"}}},
	} {
		if _, err := render(t, bad); err == nil {
			t.Errorf("values %v rendered", bad)
		}
	}
}

// TestChartOpenOnlyOnPurpose: the pod listens beyond loopback, which
// mqgate refuses without API keys (docs/security.md), so the chart renders
// only with apiKeys.existingSecret or an explicit insecureOpen, which
// becomes --insecure-open.
func TestChartOpenOnlyOnPurpose(t *testing.T) {
	if _, err := render(t, map[string]any{"insecureOpen": false}); err == nil || !strings.Contains(err.Error(), "insecureOpen") {
		t.Fatalf("rendered with neither API keys nor insecureOpen: %v", err)
	}
	args := func(vals map[string]any) string {
		var sts appsv1.StatefulSet
		mustRender(t, vals).one(t, "StatefulSet", &sts)
		return strings.Join(sts.Spec.Template.Spec.Containers[0].Args, " ")
	}
	if a := args(map[string]any{"insecureOpen": true}); !strings.Contains(a, "--insecure-open") || strings.Contains(a, "--api-keys") {
		t.Fatalf("insecureOpen=true: args %q", a)
	}
	if a := args(map[string]any{"apiKeys": map[string]any{"existingSecret": "k"}}); strings.Contains(a, "--insecure-open") || !strings.Contains(a, "--api-keys") {
		t.Fatalf("with API keys: args %q", a)
	}
}
