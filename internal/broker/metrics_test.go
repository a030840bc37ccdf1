package broker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestLabelledCountersExistAtZeroBeforeTheFirstEvent(t *testing.T) {
	m := NewMetrics(nil)
	decisions := len(messages.ReasonCodes()) // one series per code, under its own outcome
	for outcome, reasons := range decisionLabels {
		for _, r := range reasons {
			if want, _ := r.Outcome(); want != outcome {
				t.Errorf("series %s/%s is created, but %s decisions are %s", outcome, r, r, want)
			}
		}
	}
	tests := []struct {
		name string
		want int
	}{
		{"signoff_store_errors_total", len(storeOps)},
		{"signoff_nats_errors_total", len(natsErrorKinds)},
		{"signoff_bad_messages_total", len(badMessageCodes)},
		{"signoff_policy_reloads_total", len(policyReloadResults)},
		{"signoff_decisions_total", decisions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(family(t, m, tc.name).GetMetric())
			if n != tc.want || n == 0 {
				t.Errorf("%d series of %s on a new registry, want %d", n, tc.name, tc.want)
			}
		})
	}
	for _, s := range family(t, m, "signoff_store_errors_total").GetMetric() {
		if v := s.GetCounter().GetValue(); v != 0 {
			t.Errorf("store errors %v start at %v, want 0", s.GetLabel(), v)
		}
	}
}

// family gathers m's registry and returns the metric family name (empty
// when absent).
func family(t *testing.T, m *Metrics, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return &dto.MetricFamily{}
}

// TestEveryLabelValueInCodeIsInitialised reads the package's source: every
// series the code counts with literal label values (b.m.X.WithLabelValues,
// storeErr and storeFailure) must exist on a new registry, or it would
// appear only with its first event and alerts on it would watch nothing.
// It covers metrics added later too: a new vector's values must be
// initialised in NewMetrics.
func TestEveryLabelValueInCodeIsInitialised(t *testing.T) {
	m := NewMetrics(nil)
	// The broker's files and the decision engine's, which counts on the
	// series the broker registers (engine.Metrics).
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	engineFiles, err := filepath.Glob("../engine/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, engineFiles...)
	fset := token.NewFileSet()
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			var field string
			var args []ast.Expr
			switch sel.Sel.Name {
			case "storeErr", "storeFailure":
				field, args = "StoreErrors", call.Args[:1]
			case "WithLabelValues":
				inner, ok := sel.X.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				field, args = inner.Sel.Name, call.Args
			default:
				return true
			}
			values := make([]string, 0, len(args))
			for _, a := range args {
				lit, ok := a.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true // computed values: the lists' test covers them
				}
				v, _ := strconv.Unquote(lit.Value)
				values = append(values, v)
			}
			seen++
			name, labelNames := metricName(t, m, field)
			if !hasSeries(t, m, name, labelNames, values) {
				t.Errorf("%s: %s%v is counted but not initialised at 0 by NewMetrics", fset.Position(call.Pos()), name, values)
			}
			return true
		})
	}
	if seen < 10 {
		t.Fatalf("found only %d literal label values in the source: the scan is broken", seen)
	}
}

var (
	fqNameRE    = regexp.MustCompile(`fqName: "([^"]+)"`)
	varLabelsRE = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// metricName returns the name and the variable label names (in declaration
// order) of the collector in Metrics field name.
func metricName(t *testing.T, m *Metrics, field string) (string, []string) {
	t.Helper()
	v := reflect.ValueOf(m).Elem().FieldByName(field)
	if !v.IsValid() {
		t.Fatalf("Metrics has no field %s", field)
	}
	c, ok := v.Interface().(prometheus.Collector)
	if !ok {
		t.Fatalf("Metrics.%s is not a collector", field)
	}
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	desc := (<-ch).String()
	match := fqNameRE.FindStringSubmatch(desc)
	vars := varLabelsRE.FindStringSubmatch(desc)
	if match == nil || vars == nil {
		t.Fatalf("no name or labels in the description of %s: %s", field, desc)
	}
	return match[1], strings.Split(vars[1], ",")
}

// hasSeries reports whether metric name has a series with label names[i]
// set to values[i] for every i.
func hasSeries(t *testing.T, m *Metrics, name string, names, values []string) bool {
	t.Helper()
	for _, s := range family(t, m, name).GetMetric() {
		got := map[string]string{}
		for _, l := range s.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for i, v := range values {
			match = match && i < len(names) && got[names[i]] == v
		}
		if match {
			return true
		}
	}
	return false
}
