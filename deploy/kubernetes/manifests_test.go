package kubernetes_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
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

// namespace is where every namespaced object of the manifests lives.
const namespace = "signoff"

// notInKustomization are the files kustomization.yaml leaves out on
// purpose (examples to adapt before use).
var notInKustomization = []string{"ingress-example.yaml", "kustomization.yaml", "secrets.example.yaml", "servicemonitor.yaml", "tenants.example.yaml"}

// kustomization is the part of a kustomize.config.k8s.io Kustomization the
// manifests use; unknown fields are errors like everywhere else.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
}

// newObject returns an empty typed object for an apiVersion and kind, or
// nil when the manifests are not expected to hold that kind.
func newObject(apiVersion, kind string) any {
	switch apiVersion + ", " + kind {
	case "v1, Namespace":
		return &corev1.Namespace{}
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
	case "policy/v1, PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "autoscaling/v2, HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "networking.k8s.io/v1, Ingress":
		return &networkingv1.Ingress{}
	case "networking.k8s.io/v1, NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	case "monitoring.coreos.com/v1, ServiceMonitor":
		return &serviceMonitor{}
	case "kustomize.config.k8s.io/v1beta1, Kustomization":
		return &kustomization{}
	}
	return nil
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) the manifests use; anything else is an error.
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

// document is one decoded YAML document.
type document struct {
	file  string
	index int
	obj   any
}

func (d document) String() string { return fmt.Sprintf("%s#%d", d.file, d.index) }

// decodeStrict decodes one YAML document into its typed object: duplicate
// keys, unknown fields, wrong types and trailing data are all errors. It
// returns nil, nil for a document with no content (comments only).
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
		return nil, fmt.Errorf("apiVersion/kind: %w", err)
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return nil, errors.New("apiVersion and kind are required")
	}
	obj := newObject(tm.APIVersion, tm.Kind)
	if obj == nil {
		return nil, fmt.Errorf("unexpected kind %s %s (add it to newObject if it belongs here)", tm.APIVersion, tm.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s %s: trailing data", tm.APIVersion, tm.Kind)
	}
	return obj, nil
}

// splitDocuments splits a multi-document YAML file.
func splitDocuments(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// loadManifests decodes every document of every YAML file of this
// directory, failing t on the first that does not decode strictly.
func loadManifests(t *testing.T) []document {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no YAML files next to the test")
	}
	var out []document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := splitDocuments(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n := 0
		for i, doc := range docs {
			obj, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			if obj != nil {
				out = append(out, document{file: f, index: i + 1, obj: obj})
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no document", f)
		}
	}
	return out
}

// all returns the objects of type T.
func all[T any](docs []document) []T {
	var out []T
	for _, d := range docs {
		if o, ok := d.obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

func byName[T interface{ GetName() string }](objs []T, name string) (T, bool) {
	for _, o := range objs {
		if o.GetName() == name {
			return o, true
		}
	}
	var zero T
	return zero, false
}

func TestStrictDecodingRejectsWhatKubectlWouldNot(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"a misspelt field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selectr: {a: b}}\n", "unknown field"},
		{"a field of the wrong type", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: three}\n", "cannot unmarshal"},
		{"a duplicate key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nmetadata: {name: y}\n", "already set"},
		{"a kind that has no place here", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n", "unexpected kind"},
		{"a document without kind", "apiVersion: v1\nmetadata: {name: x}\n", "apiVersion and kind are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeStrict([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decode error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if obj, err := decodeStrict([]byte("# only a comment\n")); obj != nil || err != nil {
		t.Errorf("comment-only document: %v %v, want nothing", obj, err)
	}
}

func TestEveryObjectIsInTheSignoffNamespace(t *testing.T) {
	for _, d := range loadManifests(t) {
		switch o := d.obj.(type) {
		case *corev1.Namespace:
			if o.Name != namespace {
				t.Errorf("%s: namespace %q, want %q", d, o.Name, namespace)
			}
		case *kustomization:
			if o.Namespace != namespace {
				t.Errorf("%s: kustomization namespace %q, want %q", d, o.Namespace, namespace)
			}
		case metav1.Object:
			if o.GetNamespace() != namespace {
				t.Errorf("%s: %s in namespace %q, want %q", d, o.GetName(), o.GetNamespace(), namespace)
			}
		}
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	docs := loadManifests(t)
	ks := all[*kustomization](docs)
	if len(ks) != 1 {
		t.Fatalf("%d kustomizations, want 1", len(ks))
	}
	files, _ := filepath.Glob("*.yaml")
	var want []string
	for _, f := range files {
		if !slices.Contains(notInKustomization, f) {
			want = append(want, f)
		}
	}
	got := slices.Clone(ks[0].Resources)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("kustomization resources %v, want %v", got, want)
	}
}

func TestEveryDeploymentIsProbedLimitedAndLockedDown(t *testing.T) {
	deps := all[*appsv1.Deployment](loadManifests(t))
	if len(deps) < 2 {
		t.Fatalf("%d Deployments, want the broker and the approver bot", len(deps))
	}
	for _, d := range deps {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("%s: selector %v does not select its own pods %v (%v)", d.Name, d.Spec.Selector, d.Spec.Template.Labels, err)
		}
		pod := d.Spec.Template.Spec
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false (nothing here talks to the Kubernetes API)", d.Name)
		}
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			t.Errorf("%s: pod securityContext.runAsNonRoot must be true", d.Name)
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod seccompProfile must be RuntimeDefault", d.Name)
		}
		if len(pod.Containers) == 0 {
			t.Errorf("%s: no containers", d.Name)
		}
		for _, c := range pod.Containers {
			where := d.Name + "/" + c.Name
			checkProbe(t, where, "readiness", c.ReadinessProbe, "/readyz", c.Ports)
			checkProbe(t, where, "liveness", c.LivenessProbe, "/healthz", c.Ports)
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				lim, hasLim := c.Resources.Limits[r]
				req, hasReq := c.Resources.Requests[r]
				switch {
				case !hasLim || lim.IsZero():
					t.Errorf("%s: no %s limit", where, r)
				case !hasReq || req.IsZero():
					t.Errorf("%s: no %s request", where, r)
				case req.Cmp(lim) > 0:
					t.Errorf("%s: %s request %s above its limit %s", where, r, req.String(), lim.String())
				}
			}
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s: no securityContext", where)
				continue
			case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
				t.Errorf("%s: runAsNonRoot must be true", where)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s: readOnlyRootFilesystem must be true", where)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s: allowPrivilegeEscalation must be false", where)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
				t.Errorf("%s: capabilities must drop ALL and add none", where)
			case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
				t.Errorf("%s: seccompProfile must be RuntimeDefault", where)
			}
			if sc.RunAsUser == nil || *sc.RunAsUser == 0 {
				t.Errorf("%s: runAsUser must be a numeric non-root id (the images are FROM scratch)", where)
			}
		}
		for _, v := range pod.Volumes {
			// YAML 1.1 reads 0440 as octal; 440 would be 0o670: group
			// writable and world readable.
			if v.Secret != nil && (v.Secret.DefaultMode == nil || *v.Secret.DefaultMode&0o037 != 0) {
				t.Errorf("%s: secret volume %s has mode %s, want no group write and nothing for others", d.Name, v.Name, deref(v.Secret.DefaultMode, "%#o"))
			}
		}
	}
}

// deref formats *p, or "unset".
func deref[T any](p *T, format string) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprintf(format, *p)
}

func checkProbe(t *testing.T, where, kind string, p *corev1.Probe, path string, ports []corev1.ContainerPort) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s: no HTTP %s probe", where, kind)
		return
	}
	if p.HTTPGet.Path != path {
		t.Errorf("%s: %s probe on %s, want %s", where, kind, p.HTTPGet.Path, path)
	}
	if !portDeclared(p.HTTPGet.Port.String(), ports) {
		t.Errorf("%s: %s probe port %s is not a port of the container", where, kind, p.HTTPGet.Port.String())
	}
}

func portDeclared(port string, ports []corev1.ContainerPort) bool {
	for _, p := range ports {
		if p.Name == port || fmt.Sprint(p.ContainerPort) == port {
			return true
		}
	}
	return false
}

// theBroker returns the broker Deployment and its container.
func theBroker(t *testing.T, docs []document) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	d, ok := byName(all[*appsv1.Deployment](docs), "signoff-broker")
	if !ok {
		t.Fatal("no Deployment signoff-broker")
	}
	c, ok := containerNamed(d, "broker")
	if !ok {
		t.Fatal("signoff-broker has no container named broker")
	}
	return d, c
}

func containerNamed(d *appsv1.Deployment, name string) (corev1.Container, bool) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return corev1.Container{}, false
}

func env(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

func TestBrokerOutlivesItsShutdownGraceAndSpreads(t *testing.T) {
	d, c := theBroker(t, loadManifests(t))
	if d.Spec.Replicas != nil {
		t.Errorf("broker replicas %d: the HorizontalPodAutoscaler owns the count; a fixed one is reset by every apply", *d.Spec.Replicas)
	}
	grace := 15 * time.Second // the broker's default --shutdown-grace
	if e, ok := env(c, "SIGNOFF_SHUTDOWN_GRACE"); ok {
		g, err := time.ParseDuration(e.Value)
		if err != nil {
			t.Fatalf("SIGNOFF_SHUTDOWN_GRACE %q: %v", e.Value, err)
		}
		grace = g
	}
	tg := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if tg == nil || time.Duration(*tg)*time.Second <= grace {
		t.Errorf("terminationGracePeriodSeconds %s must exceed the shutdown grace %s", deref(tg, "%d"), grace)
	}
	if e, _ := env(c, "SIGNOFF_AUDIT_REPLICAS"); e.Value != "3" {
		t.Errorf("SIGNOFF_AUDIT_REPLICAS %q, want 3 (SIGNOFF_AUDIT and SIGNOFF_MODES on a 3-node cluster)", e.Value)
	}
	for _, name := range []string{"SIGNOFF_NATS", "SIGNOFF_REDIS", "SIGNOFF_POLICY", "SIGNOFF_HTTP"} {
		if _, ok := env(c, name); !ok {
			t.Errorf("broker has no %s", name)
		}
	}
	if e, _ := env(c, "SIGNOFF_REDIS"); e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		t.Error("SIGNOFF_REDIS must come from a Secret (the URL holds the password)")
	}
	tsc := d.Spec.Template.Spec.TopologySpreadConstraints
	if len(tsc) == 0 {
		t.Fatal("broker has no topologySpreadConstraints")
	}
	hostSpread := false
	for _, s := range tsc {
		sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("spread constraint on %s does not select the broker pods", s.TopologyKey)
		}
		hostSpread = hostSpread || s.TopologyKey == corev1.LabelHostname
	}
	if !hostSpread {
		t.Error("broker replicas are not spread over nodes")
	}
}

func TestBrokerPolicyIsTheConfigMapsAndParses(t *testing.T) {
	docs := loadManifests(t)
	d, c := theBroker(t, docs)
	p, _ := env(c, "SIGNOFF_POLICY")
	var cmName, key string
	for _, m := range c.VolumeMounts {
		rel, err := filepath.Rel(m.MountPath, p.Value)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				cmName, key = v.ConfigMap.Name, rel
			}
		}
	}
	if cmName == "" {
		t.Fatalf("SIGNOFF_POLICY %s is not inside a ConfigMap volume", p.Value)
	}
	cm, ok := byName(all[*corev1.ConfigMap](docs), cmName)
	if !ok {
		t.Fatalf("ConfigMap %s is not in the manifests", cmName)
	}
	data, ok := cm.Data[key]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cmName, key)
	}
	pol, err := policy.Parse([]byte(data), cmName+"/"+key)
	if err != nil {
		t.Fatalf("the ConfigMap's policy does not parse: %v", err)
	}
	for name, team := range pol.Teams() {
		if len(team.Members) == 0 {
			t.Errorf("team %s lists no members: production brokers refuse every answer for it", name)
		}
	}

	// Every member of a team must be able to answer through the bot.
	sec, ok := byName(all[*corev1.Secret](docs), "signoff-approver-bot")
	if !ok {
		t.Fatal("no Secret signoff-approver-bot")
	}
	bot, err := approverbot.ParseConfig([]byte(sec.StringData["approver-bot.yaml"]), "signoff-approver-bot/approver-bot.yaml")
	if err != nil {
		t.Fatalf("the bot's config does not parse: %v", err)
	}
	for name, team := range pol.Teams() {
		if !slices.Contains(bot.Teams, name) {
			t.Errorf("the bot does not serve team %s", name)
		}
		for _, m := range team.Members {
			if _, ok := bot.Approvers[m]; !ok {
				t.Errorf("team %s member %s is not an approver of the bot", name, m)
			}
		}
	}
}

func TestDisruptionBudgetAndAutoscalerTargetTheBroker(t *testing.T) {
	docs := loadManifests(t)
	d, _ := theBroker(t, docs)
	pdbs := all[*policyv1.PodDisruptionBudget](docs)
	if len(pdbs) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1", len(pdbs))
	}
	pdb := pdbs[0]
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("PDB selector %v does not select the broker pods %v", pdb.Spec.Selector, d.Spec.Template.Labels)
	}
	for _, other := range all[*appsv1.Deployment](docs) {
		if other.Name != d.Name && sel.Matches(labels.Set(other.Spec.Template.Labels)) {
			t.Errorf("PDB selector also selects %s's pods", other.Name)
		}
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2 {
		t.Errorf("PDB minAvailable %v, want 2", pdb.Spec.MinAvailable)
	}

	hpas := all[*autoscalingv2.HorizontalPodAutoscaler](docs)
	if len(hpas) != 1 {
		t.Fatalf("%d HorizontalPodAutoscalers, want 1", len(hpas))
	}
	h := hpas[0]
	if ref := h.Spec.ScaleTargetRef; ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("HPA targets %+v, want apps/v1 Deployment %s", ref, d.Name)
	}
	// A drain must always be possible: more replicas than the budget keeps.
	if h.Spec.MinReplicas == nil || int(*h.Spec.MinReplicas) <= pdb.Spec.MinAvailable.IntValue() || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
		t.Errorf("HPA replicas %s..%d, want a minimum above the PDB's %v", deref(h.Spec.MinReplicas, "%d"), h.Spec.MaxReplicas, pdb.Spec.MinAvailable)
	}
	cpu := false
	for _, m := range h.Spec.Metrics {
		cpu = cpu || (m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU)
	}
	if !cpu {
		t.Error("HPA does not scale on CPU")
	}
}

func TestServicesAndReferencesResolve(t *testing.T) {
	docs := loadManifests(t)
	deps := all[*appsv1.Deployment](docs)
	secrets := all[*corev1.Secret](docs)
	configMaps := all[*corev1.ConfigMap](docs)
	accounts := all[*corev1.ServiceAccount](docs)

	for _, s := range all[*corev1.Service](docs) {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		var target *appsv1.Deployment
		for _, d := range deps {
			if len(s.Spec.Selector) > 0 && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				target = d
			}
		}
		if target == nil {
			t.Errorf("Service %s selects no Deployment's pods", s.Name)
			continue
		}
		for _, p := range s.Spec.Ports {
			ok := false
			for _, c := range target.Spec.Template.Spec.Containers {
				ok = ok || portDeclared(p.TargetPort.String(), c.Ports)
			}
			if !ok {
				t.Errorf("Service %s port %s targets %s, which %s's containers do not declare", s.Name, p.Name, p.TargetPort.String(), target.Name)
			}
		}
	}

	hasKey := func(s *corev1.Secret, key string) bool {
		_, a := s.StringData[key]
		_, b := s.Data[key]
		return a || b
	}
	for _, d := range deps {
		pod := d.Spec.Template.Spec
		if _, ok := byName(accounts, pod.ServiceAccountName); !ok {
			t.Errorf("%s: ServiceAccount %q is not in the manifests", d.Name, pod.ServiceAccountName)
		}
		for _, v := range pod.Volumes {
			switch {
			case v.Secret != nil:
				s, ok := byName(secrets, v.Secret.SecretName)
				if !ok {
					t.Errorf("%s: volume %s: Secret %s is not in the manifests", d.Name, v.Name, v.Secret.SecretName)
					continue
				}
				for _, it := range v.Secret.Items {
					if !hasKey(s, it.Key) {
						t.Errorf("%s: volume %s: Secret %s has no key %s", d.Name, v.Name, s.Name, it.Key)
					}
				}
			case v.ConfigMap != nil:
				if _, ok := byName(configMaps, v.ConfigMap.Name); !ok {
					t.Errorf("%s: volume %s: ConfigMap %s is not in the manifests", d.Name, v.Name, v.ConfigMap.Name)
				}
			}
		}
		for _, c := range pod.Containers {
			for _, e := range c.Env {
				if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					continue
				}
				ref := e.ValueFrom.SecretKeyRef
				if s, ok := byName(secrets, ref.Name); !ok || !hasKey(s, ref.Key) {
					t.Errorf("%s/%s: %s refers to Secret %s key %s, which is not in the manifests", d.Name, c.Name, e.Name, ref.Name, ref.Key)
				}
			}
			for _, m := range c.VolumeMounts {
				if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
					t.Errorf("%s/%s: mount %s has no volume", d.Name, c.Name, m.Name)
				}
			}
		}
	}

	for _, ing := range all[*networkingv1.Ingress](docs) {
		for _, r := range ing.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				if _, ok := byName(all[*corev1.Service](docs), p.Backend.Service.Name); !ok {
					t.Errorf("Ingress %s routes to Service %s, which is not in the manifests", ing.Name, p.Backend.Service.Name)
				}
			}
		}
	}
}

func TestNetworkPoliciesDenyByDefaultAndOpenWhatEachPartNeeds(t *testing.T) {
	docs := loadManifests(t)
	pols := all[*networkingv1.NetworkPolicy](docs)
	denyAll := false
	for _, p := range pols {
		if len(p.Spec.PodSelector.MatchLabels) == 0 && len(p.Spec.PodSelector.MatchExpressions) == 0 &&
			len(p.Spec.Ingress) == 0 && len(p.Spec.Egress) == 0 &&
			slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) && slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			denyAll = true
		}
	}
	if !denyAll {
		t.Error("no default-deny NetworkPolicy (empty pod selector, Ingress and Egress, no rules)")
	}
	// What each Deployment must be able to reach (egress) and be reached on
	// (ingress: every container port, for Prometheus or the Ingress).
	needs := map[string][]int32{
		"signoff-broker":       {4222, 6379, 26379, 53},
		"signoff-approver-bot": {4222, 443, 53},
	}
	for _, d := range all[*appsv1.Deployment](docs) {
		podLabels := labels.Set(d.Spec.Template.Labels)
		var egress, ingress []int32
		for _, p := range pols {
			sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			if !sel.Matches(podLabels) {
				continue
			}
			for _, r := range p.Spec.Egress {
				for _, port := range r.Ports {
					egress = append(egress, port.Port.IntVal)
				}
			}
			for _, r := range p.Spec.Ingress {
				for _, port := range r.Ports {
					ingress = append(ingress, port.Port.IntVal)
				}
			}
		}
		want, ok := needs[d.Name]
		if !ok {
			t.Errorf("%s: no expectation of its traffic in this test", d.Name)
			continue
		}
		for _, port := range want {
			if !slices.Contains(egress, port) {
				t.Errorf("%s: no NetworkPolicy lets it out to port %d", d.Name, port)
			}
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, cp := range c.Ports {
				if !slices.Contains(ingress, cp.ContainerPort) {
					t.Errorf("%s: no NetworkPolicy lets anyone reach its port %s (%d)", d.Name, cp.Name, cp.ContainerPort)
				}
			}
		}
	}
}

func TestTheServiceMonitorScrapesTheBrokerService(t *testing.T) {
	docs := loadManifests(t)
	sms := all[*serviceMonitor](docs)
	if len(sms) != 1 {
		t.Fatalf("%d ServiceMonitors, want 1", len(sms))
	}
	sm := sms[0]
	svc, ok := byName(all[*corev1.Service](docs), "signoff-broker")
	if !ok {
		t.Fatal("no Service signoff-broker")
	}
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor's selector %v does not select the broker Service %v", sm.Spec.Selector, svc.Labels)
	}
	for _, other := range all[*corev1.Service](docs) {
		if other.Name != svc.Name && sel.Matches(labels.Set(other.Labels)) {
			t.Errorf("the ServiceMonitor also selects Service %s", other.Name)
		}
	}
	if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
		t.Errorf("namespaceSelector %v, want [%s]", sm.Spec.NamespaceSelector.MatchNames, namespace)
	}
	if len(sm.Spec.Endpoints) == 0 {
		t.Fatal("the ServiceMonitor has no endpoint")
	}
	for _, e := range sm.Spec.Endpoints {
		if e.Path != "/metrics" || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == e.Port }) {
			t.Errorf("endpoint %+v: want /metrics on a named port of the broker Service", e)
		}
	}
}

// The brokers page PagerDuty and Opsgenie on 443 (docs/PAGING.md): the
// network policies let them out to public addresses on 443 — and to
// nothing in the cluster's private ranges or the metadata endpoint, nor to
// public addresses on other ports.
func TestTheBrokerMayPageTheVendorsAndNothingElse(t *testing.T) {
	docs := loadManifests(t)
	pols := all[*networkingv1.NetworkPolicy](docs)
	d, _ := theBroker(t, docs)
	pod := d.Spec.Template.Labels
	// Public addresses (PagerDuty's and Opsgenie's are in these clouds'
	// ranges; their exact addresses change).
	for _, ip := range []string{"52.8.1.1", "35.190.1.1", "104.18.0.1", "2600:1f18::1"} {
		if !k8stest.EgressAllows(t, pols, pod, ip, 443) {
			t.Errorf("the broker may not reach %s on 443: pages cannot reach the vendors", ip)
		}
		if k8stest.EgressAllows(t, pols, pod, ip, 80) {
			t.Errorf("the broker may reach %s on 80: only 443 is needed", ip)
		}
	}
	// The cluster's own and the node's HTTPS: the Kubernetes API's Service,
	// pods, the cloud's metadata endpoint, loopback, private IPv6.
	for _, ip := range []string{"10.96.0.1", "172.20.0.1", "192.168.1.10", "100.64.0.1", "169.254.169.254", "127.0.0.1",
		"fd00::1", "fe80::1", "::1"} {
		if k8stest.EgressAllows(t, pols, pod, ip, 443) {
			t.Errorf("the broker may reach %s on 443: the pagers' rule must not open the cluster's own addresses", ip)
		}
	}
	// The bot keeps its 443 anywhere (Slack, Telegram, the webhook).
	bot, ok := byName(all[*appsv1.Deployment](docs), "signoff-approver-bot")
	if !ok {
		t.Fatal("no Deployment signoff-approver-bot")
	}
	if !k8stest.EgressAllows(t, pols, bot.Spec.Template.Labels, "52.8.1.1", 443) {
		t.Error("the approver bot may not reach Slack or Telegram on 443")
	}
}

// A page links to the web page's question, and the pagers' keys reach the
// broker from an optional Secret that the example has.
func TestTheBrokerLinksPagesToTheWebPageAndMountsThePagersKeys(t *testing.T) {
	docs := loadManifests(t)
	d, c := theBroker(t, docs)
	e, ok := env(c, "SIGNOFF_WEB_URL")
	if !ok || e.Value == "" {
		t.Fatal("the broker has no SIGNOFF_WEB_URL: pages would carry no link")
	}
	if err := escalator.CheckWebURL(e.Value); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(e.Value)
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, ing := range all[*networkingv1.Ingress](docs) {
		for _, r := range ing.Spec.Rules {
			hosts = append(hosts, r.Host)
		}
	}
	if u.Scheme != "https" || !slices.Contains(hosts, u.Host) {
		t.Errorf("SIGNOFF_WEB_URL %s: want https on the Ingress's host %v", e.Value, hosts)
	}

	mount := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/signoff/pagers" })
	if mount < 0 || !c.VolumeMounts[mount].ReadOnly {
		t.Fatalf("the pagers' keys are not mounted read-only at /etc/signoff/pagers: %+v", c.VolumeMounts)
	}
	vol := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[mount].Name })
	if vol < 0 {
		t.Fatal("the pagers' mount has no volume")
	}
	v := d.Spec.Template.Spec.Volumes[vol]
	if v.Secret == nil || v.Secret.Optional == nil || !*v.Secret.Optional {
		t.Fatalf("volume %s: want an optional Secret (a broker without pagers has none): %+v", v.Name, v.VolumeSource)
	}
	s, ok := byName(all[*corev1.Secret](docs), v.Secret.SecretName)
	if !ok || len(s.StringData) == 0 {
		t.Fatalf("secrets.example.yaml has no Secret %s with keys to show", v.Secret.SecretName)
	}
}

// podSecrets returns the Secrets a pod mounts or reads in its environment,
// and which of them hold a NATS nkey seed (a key ending in .nk).
func podSecrets(spec corev1.PodSpec) (all, seeds []string) {
	for _, v := range spec.Volumes {
		if v.Secret == nil {
			continue
		}
		all = append(all, v.Secret.SecretName)
		for _, it := range v.Secret.Items {
			if strings.HasSuffix(it.Key, ".nk") {
				seeds = append(seeds, v.Secret.SecretName)
			}
		}
	}
	for _, c := range spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				all = append(all, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	return all, seeds
}

func TestEveryComponentMountsItsOwnNATSCredentialSecretOnly(t *testing.T) {
	docs := loadManifests(t)
	secrets := all[*corev1.Secret](docs)
	own := map[string]string{"signoff-broker": "signoff-nats-broker", "signoff-approver-bot": "signoff-nats-approver-bot"}
	deps := all[*appsv1.Deployment](docs)
	if len(deps) != len(own) {
		t.Fatalf("%d Deployments, want the broker and the bot (a new component needs its own credential Secret here)", len(deps))
	}
	for _, d := range deps {
		want, ok := own[d.Name]
		if !ok {
			t.Errorf("Deployment %s has no credential Secret of its own", d.Name)
			continue
		}
		used, seeds := podSecrets(d.Spec.Template.Spec)
		if !slices.Equal(seeds, []string{want}) {
			t.Errorf("%s mounts nkey seeds from %v, want exactly its own Secret %s", d.Name, seeds, want)
		}
		for other, s := range own {
			if other != d.Name && slices.Contains(used, s) {
				t.Errorf("%s reads %s's credential Secret %s", d.Name, other, s)
			}
		}
		// Its Secret holds its seed and nothing else.
		s, ok := byName(secrets, want)
		if !ok {
			t.Fatalf("Secret %s is not in secrets.example.yaml", want)
		}
		if len(s.StringData)+len(s.Data) != 1 {
			t.Errorf("Secret %s holds %d keys, want one seed", want, len(s.StringData)+len(s.Data))
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Secret == nil || v.Secret.SecretName != want {
				continue
			}
			for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
				if m.Name == v.Name && !m.ReadOnly {
					t.Errorf("%s mounts its seed writable", d.Name)
				}
			}
		}
	}
	// The bot's config uses the mounted seed and never connects without it.
	bot, ok := byName(secrets, "signoff-approver-bot")
	if !ok {
		t.Fatal("no Secret signoff-approver-bot")
	}
	cfg, err := approverbot.ParseConfig([]byte(bot.StringData["approver-bot.yaml"]), "secrets.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NATS.NKeySeed != "/etc/signoff/nats/approver.nk" || cfg.NATS.Insecure || cfg.NATS.InboxPrefix != "_INBOX.approver" {
		t.Errorf("bot NATS %+v: want the mounted approver.nk, the approver inbox, never insecure", cfg.NATS)
	}
}

func TestTheBrokerServesTheTenantsAndIsNeverGivenInsecureNATS(t *testing.T) {
	docs := loadManifests(t)
	d, c := theBroker(t, docs)
	if e, ok := env(c, "SIGNOFF_INSECURE_NATS"); ok {
		t.Errorf("the broker gets SIGNOFF_INSECURE_NATS=%q", e.Value)
	}
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if strings.Contains(a, "insecure-nats") {
			t.Errorf("the broker gets %q", a)
		}
	}
	if k, _ := env(c, "SIGNOFF_NATS_NKEY"); k.Value != "/etc/signoff/nats/broker.nk" {
		t.Errorf("SIGNOFF_NATS_NKEY %q, want the mounted broker seed", k.Value)
	}
	// The tenants file and the bots' keys are the signoff-tenants ConfigMap's.
	cm, ok := byName(all[*corev1.ConfigMap](docs), "signoff-tenants")
	if !ok {
		t.Fatal("no ConfigMap signoff-tenants (tenants.example.yaml)")
	}
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
	for _, name := range []string{"SIGNOFF_TENANTS", "SIGNOFF_APPROVER_KEYS"} {
		e, _ := env(c, name)
		if mountedAt == "" || filepath.Dir(e.Value) != mountedAt || cm.Data[filepath.Base(e.Value)] == "" {
			t.Errorf("%s %q is not a file of the ConfigMap %s (mounted read-only at %q)", name, e.Value, cm.Name, mountedAt)
		}
	}
	var file struct {
		Tenants []struct {
			ID, Account, Policy string
			Agents              []struct {
				User     string   `json:"user"`
				AgentID  string   `json:"agent_id"`
				Sessions []string `json:"sessions"`
			}
			Bots, Admins []struct{ User string }
		}
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["tenants.yaml"]), &file); err != nil {
		t.Fatalf("tenants.yaml: %v", err)
	}
	pol, _ := env(c, "SIGNOFF_POLICY")
	if len(file.Tenants) != 1 || file.Tenants[0].Account != "DEMO" || file.Tenants[0].Policy != pol.Value ||
		len(file.Tenants[0].Agents) != 1 || file.Tenants[0].Agents[0].AgentID == "" || len(file.Tenants[0].Agents[0].Sessions) == 0 || len(file.Tenants[0].Bots) != 1 {
		t.Errorf("tenants.yaml %+v: want deploy/nats's DEMO account with the brokers' policy %s, an agent and a bot", file.Tenants, pol.Value)
	}
}

// TestTheNATSConfigurationTheManifestsUseHasTheirTenantAndNoAnonymousUser
// loads deploy/nats/nats-server-accounts.conf (what docs/OPERATIONS.md
// merges into the nats chart) with nats-server's own parser: every user is
// an nkey user in an account, none without credentials, and the tenants
// ConfigMap's accounts exist in it.
func TestTheNATSConfigurationTheManifestsUseHasTheirTenantAndNoAnonymousUser(t *testing.T) {
	for _, v := range []string{"BROKER", "ADMIN", "DEMO_AGENT", "DEMO_APPROVER", "DEMO_ADMIN"} {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pk, _ := kp.PublicKey()
		t.Setenv("SIGNOFF_NKEY_"+v, pk)
	}
	opts, err := server.ProcessConfigFile(filepath.Join("..", "nats", "nats-server-accounts.conf"))
	if err != nil {
		t.Fatalf("nats-server refuses deploy/nats/nats-server-accounts.conf: %v", err)
	}
	if len(opts.Users) != 0 || opts.NoAuthUser != "" || opts.Authorization != "" || opts.Username != "" || len(opts.Nkeys) == 0 {
		t.Errorf("%d password users, no_auth_user %q, token %q, user %q, %d nkey users: want nkey users only", len(opts.Users), opts.NoAuthUser, opts.Authorization, opts.Username, len(opts.Nkeys))
	}
	accounts := map[string]bool{}
	for _, u := range opts.Nkeys {
		if u.Account == nil {
			t.Errorf("nkey user %s is in no account", u.Nkey)
			continue
		}
		accounts[u.Account.Name] = true
	}
	cm, ok := byName(all[*corev1.ConfigMap](loadManifests(t)), "signoff-tenants")
	if !ok {
		t.Fatal("no ConfigMap signoff-tenants")
	}
	var file struct{ Tenants []struct{ Account string } }
	if err := yaml.Unmarshal([]byte(cm.Data["tenants.yaml"]), &file); err != nil {
		t.Fatal(err)
	}
	for _, tn := range append(file.Tenants, struct{ Account string }{"SIGNOFF"}) {
		if !accounts[tn.Account] {
			t.Errorf("account %s has no user in deploy/nats's configuration (accounts with users: %v)", tn.Account, accounts)
		}
	}
}
