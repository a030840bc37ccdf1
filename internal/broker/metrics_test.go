package broker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestLabelledCountersExistAtZeroBeforeTheFirstEvent(t *testing.T) {
	m := NewMetrics(nil)
	decisions := 0
	for _, reasons := range decisionLabels {
		decisions += len(reasons)
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
// literal label value the code counts must be among those NewMetrics
// initialises, or its series would appear only with its first error.
func TestEveryLabelValueInCodeIsInitialised(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{
		"storeErr":      storeOps,
		"storeFailure":  storeOps,
		"StoreErrors":   storeOps,
		"NATSErrors":    natsErrorKinds,
		"BadMessages":   badMessageCodes,
		"PolicyReloads": policyReloadResults,
	}
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
			name := sel.Sel.Name
			if name == "WithLabelValues" {
				inner, ok := sel.X.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				name = inner.Sel.Name
			}
			list, ok := lists[name]
			if !ok {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, _ := strconv.Unquote(lit.Value)
			seen++
			if !slices.Contains(list, v) {
				t.Errorf("%s: %s(%q) counts a label value NewMetrics does not initialise (add it to metrics.go)", fset.Position(lit.Pos()), name, v)
			}
			return true
		})
	}
	if seen < 10 {
		t.Fatalf("found only %d literal label values in the source: the scan is broken", seen)
	}
}
