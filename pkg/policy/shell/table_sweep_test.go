package shell

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestEveryTableWordAnalysesWithoutPanic sweeps the program table: every
// program alone, with each sub-command alone and with the words the
// hooks read after it (get, set, list, -l…), and with each option — as
// written, abbreviated as getopt and git take long options, with a value
// glued and apart — is analysed without a panic. Red team AQ F4 found two
// (npm pkg get, git config --glob -l) in hooks the fuzzer's seeds never
// reach; this reaches every word the table names.
func TestEveryTableWordAnalysesWithoutPanic(t *testing.T) {
	tbl := BuiltinPrograms()
	names := make([]string, 0, len(tbl.byName))
	for n := range tbl.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	tails := []string{"", "get", "set k v", "list", "-l", "x", "-- x", "--", "a=b", "$x", "*"}
	var cmds []string
	optionForms := func(o string) []string {
		name := strings.TrimSuffix(strings.TrimSuffix(o, "?"), "=")
		out := []string{name, name + "=v", name + " v", name + "v"}
		if strings.HasPrefix(name, "--") && len(name) > 4 {
			out = append(out, name[:len(name)-1], name[:4])
		}
		return out
	}
	for _, n := range names {
		spec := tbl.byName[n]
		subs := []string{""}
		for s := range spec.subs {
			subs = append(subs, s)
		}
		slices.Sort(subs)
		for _, sub := range subs {
			head := strings.TrimSpace(n + " " + sub)
			for _, tail := range tails {
				cmds = append(cmds, strings.TrimSpace(head+" "+tail))
			}
			opts := spec.options
			if s := spec.subs[sub]; s != nil {
				opts = s.options
			}
			for o := range opts {
				for _, f := range optionForms(o) {
					cmds = append(cmds, head+" "+f+" x", head+" x "+f)
				}
			}
		}
	}
	for _, c := range cmds {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Analyze(%q) panicked: %v", c, fmt.Sprint(r))
				}
			}()
			Analyze(c)
		}()
	}
	if len(cmds) < 1000 {
		t.Fatalf("swept only %d commands: the table did not load", len(cmds))
	}
}
