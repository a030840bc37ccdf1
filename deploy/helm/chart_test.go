package helm_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/signoff-dev/signoff/internal/approverbot"
	_ "github.com/signoff-dev/signoff/internal/approverbot/channels" // the bot config's channel sections
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/k8stest"
	"github.com/signoff-dev/signoff/pkg/policy"
)

const (
	chartDir  = "signoff"
	release   = "so"
	namespace = "signoff"
)

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the
// chart renders; anything else is an error.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func newObject(apiVersion, kind string) any {
	switch apiVersion + ", " + kind {
	case "v1, ConfigMap":
		return &corev1.ConfigMap{}
	case "v1, Secret":
		return &corev1.Secret{}
	case "v1, Service":
		return &corev1.Service{}
	case "v1, ServiceAccount":
		return &corev1.ServiceAccount{}
	case "apps/v1, Deployment":
		return &appsv1.Deployment{}
	case "apps/v1, StatefulSet":
		return &appsv1.StatefulSet{}
	case "policy/v1, PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "autoscaling/v2, HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "networking.k8s.io/v1, NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	case "monitoring.coreos.com/v1, ServiceMonitor":
		return &serviceMonitor{}
	}
	return nil
}

// decodeStrict decodes one document into its typed object: unknown fields,
// wrong types and duplicate keys are errors.
func decodeStrict(doc []byte) (any, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("YAML: %w", err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	obj := newObject(tm.APIVersion, tm.Kind)
	if obj == nil {
		return nil, fmt.Errorf("unexpected kind %s %s", tm.APIVersion, tm.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	return obj, nil
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// render renders the chart with overrides over values.yaml, as `helm
// template` would (schema validation included, strict about missing
// values), and returns the error. The DEMO tenant is given unless
// overrides set tenants.
func render(t *testing.T, overrides map[string]any) ([]any, error) {
	t.Helper()
	c := loadChart(t)
	overrides = withTenants(overrides)
	vals, err := chartutil.ToRenderValues(c, overrides, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Engine{Strict: true}.Render(c, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []any
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out[name])))
		for i := 1; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			obj, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s, document %d: %v\n%s", name, i, err, doc)
			}
			if obj != nil {
				objs = append(objs, obj)
			}
		}
	}
	return objs, nil
}

func mustRender(t *testing.T, overrides map[string]any) []any {
	t.Helper()
	objs, err := render(t, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func all[T any](objs []any) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func named[T interface{ GetName() string }](t *testing.T, objs []any, name string) T {
	t.Helper()
	for _, o := range all[T](objs) {
		if o.GetName() == name {
			return o
		}
	}
	var zero T
	t.Fatalf("no %T %s", zero, name)
	return zero
}

func env(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

// seeds are the key pairs of the plane's users (deploy/nats genkeys' names),
// made once; bundledUsers are their public keys as nats.bundled.users.
var seeds = func() map[string]nkeys.KeyPair {
	kps := map[string]nkeys.KeyPair{}
	for _, name := range []string{"broker", "admin", "demoAgent", "demoApprover", "demoAdmin"} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			panic(err)
		}
		kps[name] = kp
	}
	return kps
}()

func pub(name string) string {
	k, _ := seeds[name].PublicKey()
	return k
}

var bundledUsers = map[string]any{
	"broker": pub("broker"), "admin": pub("admin"),
	"demoAgent": pub("demoAgent"), "demoApprover": pub("demoApprover"), "demoAdmin": pub("demoAdmin"),
}

// demoTenants is the DEMO tenant as genkeys' tenants.yaml has it.
func demoTenants() []any {
	return []any{map[string]any{
		"id": "demo", "account": "DEMO",
		"agents": []any{map[string]any{"user": pub("demoAgent"), "agent_id": "demo-agent"}},
		"bots":   []any{map[string]any{"user": pub("demoApprover")}},
		"admins": []any{map[string]any{"user": pub("demoAdmin")}},
	}}
}

// withTenants returns vals over the values every install must give (the
// tenants): a deep copy, so callers' maps are not changed.
func withTenants(vals map[string]any) map[string]any {
	out := map[string]any{"tenants": demoTenants()}
	merge(out, vals)
	return out
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
			cp := map[string]any{}
			merge(cp, sv)
			dst[k] = cp
			continue
		}
		dst[k] = v
	}
}

func TestTheChartLintsClean(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"defaults": withTenants(nil),
		"bundled":  withTenants(map[string]any{"nats": map[string]any{"bundled": map[string]any{"enabled": true, "users": bundledUsers}}, "redis": map[string]any{"bundled": map[string]any{"enabled": true}}}),
	} {
		t.Run(name, func(t *testing.T) {
			l := lint.All(chartDir, vals, namespace, false)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

func TestEveryPartIsLockedDownProbedAndLimited(t *testing.T) {
	objs := mustRender(t, map[string]any{"nats": map[string]any{"bundled": map[string]any{"enabled": true, "users": bundledUsers}}, "redis": map[string]any{"bundled": map[string]any{"enabled": true}}})
	var pods []struct {
		name string
		spec corev1.PodSpec
	}
	for _, d := range all[*appsv1.Deployment](objs) {
		pods = append(pods, struct {
			name string
			spec corev1.PodSpec
		}{d.Name, d.Spec.Template.Spec})
	}
	for _, s := range all[*appsv1.StatefulSet](objs) {
		pods = append(pods, struct {
			name string
			spec corev1.PodSpec
		}{s.Name, s.Spec.Template.Spec})
	}
	if len(pods) != 4 {
		t.Fatalf("%d workloads, want broker, bot, NATS and Redis", len(pods))
	}
	for _, p := range pods {
		if p.spec.AutomountServiceAccountToken == nil || *p.spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false", p.name)
		}
		for _, c := range p.spec.Containers {
			sc := c.SecurityContext
			if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				t.Errorf("%s/%s: security context not locked down: %+v", p.name, c.Name, sc)
			}
			if c.ReadinessProbe == nil || c.LivenessProbe == nil {
				t.Errorf("%s/%s: no readiness or liveness probe", p.name, c.Name)
			}
			if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
				t.Errorf("%s/%s: no resources", p.name, c.Name)
			}
		}
	}
}

func TestTheBrokerNeedsNoFixedCountUnderTheAutoscalerAndRunsThePolicy(t *testing.T) {
	objs := mustRender(t, nil)
	d := named[*appsv1.Deployment](t, objs, release+"-broker")
	if d.Spec.Replicas != nil {
		t.Errorf("broker replicas %d with the autoscaler on", *d.Spec.Replicas)
	}
	hpa := named[*autoscalingv2.HorizontalPodAutoscaler](t, objs, release+"-broker")
	if hpa.Spec.ScaleTargetRef.Name != d.Name || *hpa.Spec.MinReplicas != 3 {
		t.Errorf("HPA %+v", hpa.Spec)
	}
	c := d.Spec.Template.Spec.Containers[0]
	p, _ := env(c, "SIGNOFF_POLICY")
	cm := named[*corev1.ConfigMap](t, objs, release+"-policy")
	if filepath.Dir(p.Value) != "/etc/signoff/policy" || cm.Data[filepath.Base(p.Value)] == "" {
		t.Fatalf("SIGNOFF_POLICY %q is not the ConfigMap's file", p.Value)
	}
	if _, err := policy.Parse([]byte(cm.Data["policy.yaml"]), "values broker.policy"); err != nil {
		t.Errorf("the default policy does not parse: %v", err)
	}
	if r, _ := env(c, "SIGNOFF_REDIS"); r.ValueFrom == nil || r.ValueFrom.SecretKeyRef == nil || r.ValueFrom.SecretKeyRef.Name != "signoff-redis" {
		t.Errorf("SIGNOFF_REDIS %+v: want the existing Secret signoff-redis", r)
	}
	if n, _ := env(c, "SIGNOFF_NATS"); n.Value != "nats://nats.nats.svc:4222" {
		t.Errorf("SIGNOFF_NATS %q", n.Value)
	}
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g <= 15 {
		t.Errorf("terminationGracePeriodSeconds %v must exceed the 15s shutdown grace", g)
	}

	fixed := mustRender(t, map[string]any{"broker": map[string]any{"autoscaling": map[string]any{"enabled": false}, "replicas": 4}})
	d = named[*appsv1.Deployment](t, fixed, release+"-broker")
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 4 || len(all[*autoscalingv2.HorizontalPodAutoscaler](fixed)) != 0 {
		t.Errorf("without autoscaling: replicas %v and %d HPAs, want 4 and none", d.Spec.Replicas, len(all[*autoscalingv2.HorizontalPodAutoscaler](fixed)))
	}
}

func TestTheRenderedBotConfigParsesAndUsesTheApproversInbox(t *testing.T) {
	objs := mustRender(t, nil)
	sec := named[*corev1.Secret](t, objs, release+"-approver-bot")
	cfg, err := approverbot.ParseConfig([]byte(sec.StringData["approver-bot.yaml"]), "rendered approver-bot.yaml")
	if err != nil {
		t.Fatalf("the rendered bot config does not parse: %v\n%s", err, sec.StringData["approver-bot.yaml"])
	}
	if cfg.NATS.InboxPrefix != "_INBOX.approver" || cfg.NATS.NKeySeed != "/etc/signoff/nats/approver.nk" || cfg.NATS.URL != "nats://nats.nats.svc:4222" {
		t.Errorf("bot NATS settings %+v: want deploy/nats's approver inbox, the mounted seed and nats.url", cfg.NATS)
	}
	d := named[*appsv1.Deployment](t, objs, release+"-approver-bot")
	if d.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("the bot's pods carry no checksum of the rendered config: a new config would not roll them")
	}
	var secretVol string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "config" && v.Secret != nil {
			secretVol = v.Secret.SecretName
		}
	}
	if secretVol != sec.Name {
		t.Errorf("the bot mounts Secret %q, want the rendered %s", secretVol, sec.Name)
	}

	// With an existing Secret the chart renders none and mounts that one.
	objs = mustRender(t, map[string]any{"approverBot": map[string]any{"existingSecret": "my-bot"}})
	for _, s := range all[*corev1.Secret](objs) {
		t.Errorf("rendered Secret %s although approverBot.existingSecret is set", s.Name)
	}
	d = named[*appsv1.Deployment](t, objs, release+"-approver-bot")
	if v := d.Spec.Template.Spec.Volumes[0]; v.Secret == nil || v.Secret.SecretName != "my-bot" {
		t.Errorf("bot config volume %+v, want Secret my-bot", v)
	}
}

func TestTheBundledNATSRunsDeployNATSsConfiguration(t *testing.T) {
	objs := mustRender(t, map[string]any{
		"nats":  map[string]any{"bundled": map[string]any{"enabled": true, "users": bundledUsers}},
		"redis": map[string]any{"bundled": map[string]any{"enabled": true}},
	})
	cm := named[*corev1.ConfigMap](t, objs, release+"-nats")
	ss := named[*appsv1.StatefulSet](t, objs, release+"-nats")
	// The chart's copies are deploy/nats's files.
	dir := t.TempDir()
	for key, data := range cm.Data {
		want, err := os.ReadFile(filepath.Join("..", "nats", key))
		if err != nil {
			t.Fatalf("ConfigMap key %s: %v", key, err)
		}
		if strings.TrimSpace(data) != strings.TrimSpace(string(want)) {
			t.Errorf("the chart's files/%s differs from deploy/nats/%s: copy it again", key, key)
		}
		if err := os.WriteFile(filepath.Join(dir, key), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// nats-server reads it with the StatefulSet's environment.
	c := ss.Spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		t.Setenv(e.Name, e.Value)
	}
	if !slices.Equal(c.Args, []string{"-c", "/etc/nats/nats-server-accounts.conf"}) {
		t.Fatalf("NATS args %v", c.Args)
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats-server-accounts.conf"))
	if err != nil {
		t.Fatalf("nats-server refuses the bundled config: %v", err)
	}
	if !opts.JetStream || len(opts.Nkeys) != 5 || len(opts.Users) != 0 || opts.NoAuthUser != "" || opts.Authorization != "" || opts.Username != "" {
		t.Errorf("bundled NATS: JetStream %v, %d nkey users, %d password users, no_auth_user %q, token %q, user %q; want JetStream, the 5 nkey users and nothing else",
			opts.JetStream, len(opts.Nkeys), len(opts.Users), opts.NoAuthUser, opts.Authorization, opts.Username)
	}
	accountOf := map[string]string{}
	for _, u := range opts.Nkeys {
		if u.Account == nil {
			t.Errorf("nkey user %s is in no account", u.Nkey)
			continue
		}
		accountOf[u.Nkey] = u.Account.Name
	}
	for name, acc := range map[string]string{"broker": "SIGNOFF", "admin": "SIGNOFF", "demoAgent": "DEMO", "demoApprover": "DEMO", "demoAdmin": "DEMO"} {
		if accountOf[pub(name)] != acc {
			t.Errorf("the %s user is in account %q, want %s", name, accountOf[pub(name)], acc)
		}
	}
	// The real server runs it: the broker's seed and the DEMO agent's get
	// in, a client without credentials and an unknown key do not.
	opts.Port, opts.HTTPPort, opts.StoreDir = -1, 0, t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the bundled NATS did not start")
	}
	for _, name := range []string{"broker", "demoAgent"} {
		nc, err := nats.Connect(srv.ClientURL(), nkeyOption(t, seeds[name]))
		if err != nil {
			t.Errorf("%s's seed is refused by the bundled NATS: %v", name, err)
			continue
		}
		nc.Close()
	}
	if nc, err := nats.Connect(srv.ClientURL()); err == nil {
		nc.Close()
		t.Error("the bundled NATS admits a client without credentials")
	}
	stranger, _ := nkeys.CreateUser()
	if nc, err := nats.Connect(srv.ClientURL(), nkeyOption(t, stranger)); err == nil {
		nc.Close()
		t.Error("the bundled NATS admits an unknown nkey")
	}

	// The broker and the bot use the bundled servers.
	b := named[*appsv1.Deployment](t, objs, release+"-broker").Spec.Template.Spec.Containers[0]
	svc := named[*corev1.Service](t, objs, release+"-nats")
	if n, _ := env(b, "SIGNOFF_NATS"); n.Value != "nats://"+svc.Name+":4222" {
		t.Errorf("broker SIGNOFF_NATS %q, want the bundled Service %s", n.Value, svc.Name)
	}
	if r, _ := env(b, "SIGNOFF_REDIS"); r.Value != "redis://"+release+"-redis:6379/0" {
		t.Errorf("broker SIGNOFF_REDIS %+v, want the bundled Redis", r)
	}
	if a, _ := env(b, "SIGNOFF_AUDIT_REPLICAS"); a.Value != "1" {
		t.Errorf("SIGNOFF_AUDIT_REPLICAS %q on one bundled server, want 1", a.Value)
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	if !sel.Matches(labels.Set(ss.Spec.Template.Labels)) {
		t.Error("the NATS Service does not select the NATS pods")
	}
	redis := named[*appsv1.StatefulSet](t, objs, release+"-redis").Spec.Template.Spec.Containers[0]
	args := strings.Join(redis.Args, " ")
	if !strings.Contains(args, "--maxmemory-policy noeviction") || !strings.Contains(args, "--appendonly yes") || !strings.Contains(args, "--appendfsync always") {
		t.Errorf("bundled Redis args %v: want AOF synced before each reply, and noeviction", redis.Args)
	}
}

func nkeyOption(t *testing.T, kp nkeys.KeyPair) nats.Option {
	t.Helper()
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	opt, err := nats.NkeyOptionFromSeed(writeFile(t, "user.nk", string(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadValuesAreRefusedWithTheirKey(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"an unknown top-level key", map[string]any{"brokr": map[string]any{}}, "brokr"},
		{"a misspelt nested key", map[string]any{"broker": map[string]any{"autoscaling": map[string]any{"enable": true}}}, "enable"},
		{"a bad pull policy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		{"a NATS URL that is not one", map[string]any{"nats": map[string]any{"url": "http://nats:4222"}}, "url"},
		{"an empty policy", map[string]any{"broker": map[string]any{"policy": ""}}, "policy"},
		{"a bad public nkey", map[string]any{"nats": map[string]any{"bundled": map[string]any{"enabled": true, "users": map[string]any{"broker": "SUAB"}}}}, "broker"},
		{"bundled NATS without its users", map[string]any{"nats": map[string]any{"bundled": map[string]any{"enabled": true}}}, "nats.bundled.users.broker"},
		{"no tenant", map[string]any{"tenants": []any{}}, "tenants: at least one tenant"},
		{"a tenant user that is not a public nkey", map[string]any{"tenants": []any{map[string]any{"id": "demo", "account": "DEMO", "bots": []any{map[string]any{"user": "SUAB"}}}}}, "user"},
		{"a tenant account that is not one subject token", map[string]any{"tenants": []any{map[string]any{"id": "demo", "account": "DE.MO"}}}, "account"},
		{"signed responses but no tenant bot", map[string]any{"tenants": []any{map[string]any{"id": "demo", "account": "DEMO"}}}, "broker.requireSignedResponses"},
		{"a tenant the bundled NATS has no account for", map[string]any{"nats": map[string]any{"bundled": map[string]any{"enabled": true, "users": bundledUsers}}, "tenants": []any{map[string]any{"id": "acme", "account": "ACME", "bots": []any{map[string]any{"user": pub("demoApprover")}}}}}, "tenants[0].account"},
		{"the old single credentials Secret", map[string]any{"nats": map[string]any{"credentialsSecret": "signoff-nats"}}, "credentialsSecret"},
		{"extra env that is not a flag variable", map[string]any{"broker": map[string]any{"extraEnv": map[string]any{"PATH": "/tmp"}}}, "PATH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestNetworkPoliciesAndTheServiceMonitor(t *testing.T) {
	objs := mustRender(t, map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}}}})
	pols := all[*networkingv1.NetworkPolicy](objs)
	deny := named[*networkingv1.NetworkPolicy](t, objs, release+"-default-deny")
	if len(deny.Spec.Ingress)+len(deny.Spec.Egress) != 0 || len(deny.Spec.PolicyTypes) != 2 {
		t.Errorf("default deny %+v", deny.Spec)
	}
	needs := map[string][]int32{release + "-broker": {4222, 6379, 53}, release + "-approver-bot": {4222, 443, 53}}
	for _, d := range all[*appsv1.Deployment](objs) {
		denied := false
		var egress []int32
		for _, p := range pols {
			s, _ := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
			if !s.Matches(labels.Set(d.Spec.Template.Labels)) {
				continue
			}
			denied = denied || p.Name == deny.Name
			for _, r := range p.Spec.Egress {
				for _, port := range r.Ports {
					egress = append(egress, port.Port.IntVal)
				}
			}
		}
		if !denied {
			t.Errorf("%s: not under the default deny", d.Name)
		}
		for _, port := range needs[d.Name] {
			if !slices.Contains(egress, port) {
				t.Errorf("%s: may not reach port %d", d.Name, port)
			}
		}
	}
	sm := all[*serviceMonitor](objs)
	if len(sm) != 1 {
		t.Fatalf("%d ServiceMonitors with metrics.serviceMonitor.enabled", len(sm))
	}
	svc := named[*corev1.Service](t, objs, release+"-broker")
	sel, _ := metav1.LabelSelectorAsSelector(&sm[0].Spec.Selector)
	if !sel.Matches(labels.Set(svc.Labels)) || sel.Matches(labels.Set(named[*corev1.Service](t, objs, release+"-approver-bot").Labels)) {
		t.Error("the ServiceMonitor must select the broker Service only")
	}
	if sm[0].Labels["release"] != "prometheus" || sm[0].Spec.Endpoints[0].Port != "http" {
		t.Errorf("ServiceMonitor %+v", sm[0])
	}
	if len(all[*serviceMonitor](mustRender(t, nil))) != 0 {
		t.Error("a ServiceMonitor by default: the CRD may not exist")
	}
}

// pagingPolicy is a policy whose team's ladder pages PagerDuty.
const pagingPolicy = `mode: auto-edit
ttl: 15m
pagers:
  oncall-pd:
    kind: pagerduty
    routing_key_file: /etc/signoff/pagers/pagerduty-routing-key
teams:
  default:
    members: [alice]
    escalation:
      - { after: 2m, remind: true }
      - { after: 10m, page: oncall-pd }
`

// broker.paging.egress: the brokers may reach the paging vendors (public
// addresses on 443, never the cluster's own ranges) when the policy has
// pagers, or when told; or only the CIDRs and port given (an egress proxy).
func TestTheBrokersMayPageWhenThePolicyHasPagers(t *testing.T) {
	type probe struct {
		ip   string
		port int32
		want bool
	}
	public := []probe{{"52.8.1.1", 443, true}, {"2600:1f18::1", 443, true}, {"52.8.1.1", 80, false}}
	private := []probe{{"10.96.0.1", 443, false}, {"172.20.0.1", 443, false}, {"192.168.1.10", 443, false},
		{"100.64.0.1", 443, false}, {"169.254.169.254", 443, false}, {"fd00::1", 443, false}, {"fe80::1", 443, false}}
	closed := []probe{{"52.8.1.1", 443, false}, {"2600:1f18::1", 443, false}}
	tests := []struct {
		name   string
		broker map[string]any
		probes []probe
	}{
		{"the default policy has no pagers: closed", nil, closed},
		{"a policy with pagers opens public 443", map[string]any{"policy": pagingPolicy}, append(public, private...)},
		{"off despite the pagers", map[string]any{"policy": pagingPolicy,
			"paging": map[string]any{"egress": map[string]any{"enabled": false}}}, closed},
		{"on without pagers", map[string]any{"paging": map[string]any{"egress": map[string]any{"enabled": true}}}, append(public, private...)},
		{"to an egress proxy only", map[string]any{"policy": pagingPolicy,
			"paging": map[string]any{"httpsProxy": "http://10.20.0.15:3128", "egress": map[string]any{"cidrs": []any{"10.20.0.15/32"}, "port": 3128}}},
			[]probe{{"10.20.0.15", 3128, true}, {"10.20.0.16", 3128, false}, {"10.20.0.15", 443, false}, {"52.8.1.1", 443, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var values map[string]any
			if tc.broker != nil {
				values = map[string]any{"broker": tc.broker}
			}
			objs := mustRender(t, values)
			pols := all[*networkingv1.NetworkPolicy](objs)
			d := named[*appsv1.Deployment](t, objs, release+"-broker")
			for _, p := range tc.probes {
				if got := k8stest.EgressAllows(t, pols, d.Spec.Template.Labels, p.ip, p.port); got != p.want {
					t.Errorf("the broker may reach %s port %d: %v, want %v", p.ip, p.port, got, p.want)
				}
			}
			// The rule never opens the bundled servers or anything else
			// in the cluster to the bot either: its own 443 is unchanged.
			bot := named[*appsv1.Deployment](t, objs, release+"-approver-bot")
			if !k8stest.EgressAllows(t, pols, bot.Spec.Template.Labels, "52.8.1.1", 443) {
				t.Error("the approver bot lost its 443")
			}
		})
	}
	// The paging policy is one the broker loads.
	if _, err := policy.Parse([]byte(pagingPolicy), "pagingPolicy"); err != nil {
		t.Fatalf("the test's paging policy does not parse: %v", err)
	}
}

// broker.webURL and broker.paging: the link's base, the proxy and the
// pagers' key files reach every broker; by default none of them is set.
func TestWebURLProxyAndPagerKeysReachTheBroker(t *testing.T) {
	objs := mustRender(t, map[string]any{"broker": map[string]any{"policy": pagingPolicy, "webURL": "https://approvals.example.com",
		"paging": map[string]any{"keysSecret": "signoff-pagers", "httpsProxy": "http://egress-proxy.proxy.svc:3128"}}})
	d := named[*appsv1.Deployment](t, objs, release+"-broker")
	c := d.Spec.Template.Spec.Containers[0]
	u, ok := env(c, "SIGNOFF_WEB_URL")
	if !ok || u.Value != "https://approvals.example.com" {
		t.Fatalf("SIGNOFF_WEB_URL %+v", u)
	}
	if err := escalator.CheckWebURL(u.Value); err != nil {
		t.Fatal(err)
	}
	if p, _ := env(c, "HTTPS_PROXY"); p.Value != "http://egress-proxy.proxy.svc:3128" {
		t.Errorf("HTTPS_PROXY %+v", p)
	}
	mount := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/signoff/pagers" })
	if mount < 0 || !c.VolumeMounts[mount].ReadOnly {
		t.Fatalf("no read-only mount at /etc/signoff/pagers: %+v", c.VolumeMounts)
	}
	vol := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[mount].Name })
	if vol < 0 {
		t.Fatal("the pagers' mount has no volume")
	}
	if s := d.Spec.Template.Spec.Volumes[vol].Secret; s == nil || s.SecretName != "signoff-pagers" || s.Optional != nil && *s.Optional {
		t.Errorf("the pagers' volume %+v: want the Secret signoff-pagers, not optional", d.Spec.Template.Spec.Volumes[vol])
	}
	// The policy's key file is in the mounted directory.
	if _, err := policy.Parse([]byte(named[*corev1.ConfigMap](t, objs, release+"-policy").Data["policy.yaml"]), "rendered policy"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pagingPolicy, "routing_key_file: "+c.VolumeMounts[mount].MountPath+"/") {
		t.Error("the test's policy reads its key from elsewhere than the mount")
	}

	def := named[*appsv1.Deployment](t, mustRender(t, nil), release+"-broker")
	dc := def.Spec.Template.Spec.Containers[0]
	for _, name := range []string{"SIGNOFF_WEB_URL", "HTTPS_PROXY"} {
		if e, ok := env(dc, name); ok {
			t.Errorf("by default the broker has %s=%q", name, e.Value)
		}
	}
	for _, v := range def.Spec.Template.Spec.Volumes {
		if v.Name == "pagers" {
			t.Errorf("by default the broker mounts %+v", v)
		}
	}
}

func TestBadPagingValuesAreRefused(t *testing.T) {
	tests := []struct {
		name   string
		broker map[string]any
		want   string
	}{
		{"a web URL without a scheme", map[string]any{"webURL": "approvals.example.com"}, "webURL"},
		{"a web URL with credentials", map[string]any{"webURL": "https://u:p@approvals.example.com"}, "webURL"},
		{"a web URL with a fragment", map[string]any{"webURL": "https://approvals.example.com/#x"}, "webURL"},
		{"a web URL that is not http", map[string]any{"webURL": "javascript:alert(1)"}, "webURL"},
		{"egress that is neither auto nor a boolean", map[string]any{"paging": map[string]any{"egress": map[string]any{"enabled": "yes"}}}, "enabled"},
		{"a CIDR without its length", map[string]any{"paging": map[string]any{"egress": map[string]any{"cidrs": []any{"10.20.0.15"}}}}, "cidrs"},
		{"port 0", map[string]any{"paging": map[string]any{"egress": map[string]any{"port": 0}}}, "port"},
		{"a Secret name Kubernetes refuses", map[string]any{"paging": map[string]any{"keysSecret": "Pager_Keys"}}, "keysSecret"},
		{"a misspelt key", map[string]any{"paging": map[string]any{"keySecret": "x"}}, "keySecret"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, map[string]any{"broker": tc.broker})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// secretsOf returns the Secrets a pod spec mounts as volumes or reads in
// its environment.
func secretsOf(spec corev1.PodSpec) []string {
	var out []string
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
	}
	for _, c := range spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	return out
}

func TestEveryComponentMountsItsOwnNATSCredentialSecretOnly(t *testing.T) {
	objs := mustRender(t, map[string]any{"nats": map[string]any{"credentials": map[string]any{"broker": "b-cred", "approverBot": "bot-cred"}}})
	broker := named[*appsv1.Deployment](t, objs, release+"-broker").Spec.Template.Spec
	bot := named[*appsv1.Deployment](t, objs, release+"-approver-bot").Spec.Template.Spec
	for _, tc := range []struct {
		name       string
		spec       corev1.PodSpec
		own, other string
		seedKey    string
	}{
		{"broker", broker, "b-cred", "bot-cred", "broker.nk"},
		{"approver bot", bot, "bot-cred", "b-cred", "approver.nk"},
	} {
		var mounted bool
		for _, v := range tc.spec.Volumes {
			if v.Secret == nil || v.Secret.SecretName != tc.own {
				continue
			}
			mounted = len(v.Secret.Items) == 1 && v.Secret.Items[0].Key == tc.seedKey
			for _, m := range tc.spec.Containers[0].VolumeMounts {
				if m.Name == v.Name && !m.ReadOnly {
					t.Errorf("%s mounts its seed Secret %s writable", tc.name, tc.own)
				}
			}
		}
		if !mounted {
			t.Errorf("%s does not mount exactly %s from its own Secret %s (it mounts Secrets %v)", tc.name, tc.seedKey, tc.own, secretsOf(tc.spec))
		}
		if slices.Contains(secretsOf(tc.spec), tc.other) {
			t.Errorf("%s reads the other component's credential Secret %s", tc.name, tc.other)
		}
	}
	// The bot's config uses the mounted seed.
	sec := named[*corev1.Secret](t, objs, release+"-approver-bot")
	cfg, err := approverbot.ParseConfig([]byte(sec.StringData["approver-bot.yaml"]), "rendered approver-bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NATS.NKeySeed != "/etc/signoff/nats/approver.nk" || cfg.NATS.Insecure {
		t.Errorf("bot NATS %+v: want the mounted seed and never insecure", cfg.NATS)
	}
}

func TestTheBrokerIsNeverGivenInsecureNATS(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"defaults": nil,
		"bundled":  {"nats": map[string]any{"bundled": map[string]any{"enabled": true, "users": bundledUsers}}, "redis": map[string]any{"bundled": map[string]any{"enabled": true}}},
	} {
		objs := mustRender(t, vals)
		c := named[*appsv1.Deployment](t, objs, release+"-broker").Spec.Template.Spec.Containers[0]
		if e, ok := env(c, "SIGNOFF_INSECURE_NATS"); ok {
			t.Errorf("%s: the broker gets SIGNOFF_INSECURE_NATS=%q", name, e.Value)
		}
		for _, a := range append(slices.Clone(c.Command), c.Args...) {
			if strings.Contains(a, "insecure-nats") {
				t.Errorf("%s: the broker gets %q", name, a)
			}
		}
		if k, _ := env(c, "SIGNOFF_NATS_NKEY"); k.Value != "/etc/signoff/nats/broker.nk" {
			t.Errorf("%s: SIGNOFF_NATS_NKEY %q, want the mounted broker seed", name, k.Value)
		}
	}
	// Nor through extraEnv, nor the bot through its config.
	for _, tc := range []struct {
		vals map[string]any
		want string
	}{
		{map[string]any{"broker": map[string]any{"extraEnv": map[string]any{"SIGNOFF_INSECURE_NATS": "true"}}}, "broker.extraEnv.SIGNOFF_INSECURE_NATS"},
		{map[string]any{"broker": map[string]any{"extraEnv": map[string]any{"SIGNOFF_TENANTS": "/tmp/t.yaml"}}}, "broker.extraEnv.SIGNOFF_TENANTS"},
		{map[string]any{"approverBot": map[string]any{"config": map[string]any{"nats": map[string]any{"insecure": true}}}}, "approverBot.config.nats.insecure"},
	} {
		if _, err := render(t, tc.vals); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("render error %v, want one naming %s", err, tc.want)
		}
	}
}

func TestTheTenantsFileReachesTheBrokersAndTrustsTheTenantsBots(t *testing.T) {
	objs := mustRender(t, nil)
	d := named[*appsv1.Deployment](t, objs, release+"-broker")
	c := d.Spec.Template.Spec.Containers[0]
	tf, _ := env(c, "SIGNOFF_TENANTS")
	cm := named[*corev1.ConfigMap](t, objs, release+"-tenants")
	var mountedAt string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name && m.ReadOnly {
					mountedAt = m.MountPath
				}
			}
		}
	}
	if mountedAt == "" || filepath.Dir(tf.Value) != mountedAt || cm.Data[filepath.Base(tf.Value)] == "" {
		t.Fatalf("SIGNOFF_TENANTS %q is not the ConfigMap %s's file (mounted read-only at %q)", tf.Value, cm.Name, mountedAt)
	}
	var file struct {
		Tenants []struct {
			ID, Account, Policy string
			Agents              []struct {
				User    string `json:"user"`
				AgentID string `json:"agent_id"`
			}
			Bots, Admins []struct{ User string }
		}
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["tenants.yaml"]), &file); err != nil {
		t.Fatalf("tenants.yaml: %v\n%s", err, cm.Data["tenants.yaml"])
	}
	if len(file.Tenants) != 1 {
		t.Fatalf("%d tenants, want DEMO", len(file.Tenants))
	}
	tn := file.Tenants[0]
	pol, _ := env(c, "SIGNOFF_POLICY")
	if tn.ID != "demo" || tn.Account != "DEMO" || tn.Policy != pol.Value || len(tn.Agents) != 1 || tn.Agents[0].User != pub("demoAgent") ||
		tn.Agents[0].AgentID != "demo-agent" || len(tn.Bots) != 1 || tn.Bots[0].User != pub("demoApprover") {
		t.Errorf("tenant %+v: want demo/DEMO with the chart's policy %s, its agent and bot", tn, pol.Value)
	}
	if k, _ := env(c, "SIGNOFF_APPROVER_KEYS"); k.Value != pub("demoApprover") {
		t.Errorf("SIGNOFF_APPROVER_KEYS %q, want the DEMO bot's key", k.Value)
	}
	if d.Spec.Template.Annotations["checksum/tenants"] == "" {
		t.Error("no checksum/tenants on the broker pods: a new tenants file would not reach them")
	}
	before := d.Spec.Template.Annotations["checksum/tenants"]
	two := append(demoTenants(), map[string]any{"id": "acme", "account": "ACME", "bots": []any{map[string]any{"user": pub("admin")}}})
	objs = mustRender(t, map[string]any{"tenants": two})
	d = named[*appsv1.Deployment](t, objs, release+"-broker")
	if d.Spec.Template.Annotations["checksum/tenants"] == before {
		t.Error("adding a tenant leaves checksum/tenants unchanged")
	}
	if k, _ := env(d.Spec.Template.Spec.Containers[0], "SIGNOFF_APPROVER_KEYS"); k.Value != pub("demoApprover")+","+pub("admin") {
		t.Errorf("SIGNOFF_APPROVER_KEYS %q with two tenants, want both bots", k.Value)
	}
}
