package shell

import (
	"sort"
	"strings"
	"testing"
)

// TestCompleteTablesAcceptTheirOptions uses every option of the complete
// tables of find, rg, fd, go and node (and of go's sub-commands) the way
// the program reads it: the analysis must understand each one — a
// "not understood" reason for a listed option would mean the scanner
// reads the table differently from the help check.
func TestCompleteTablesAcceptTheirOptions(t *testing.T) {
	tbl := BuiltinPrograms()
	for _, name := range []string{"find", "rg", "fd", "fdfind", "go", "node"} {
		spec := tbl.byName[name]
		if spec == nil || !spec.complete {
			t.Fatalf("%s has no complete entry", name)
		}
		try := func(sub string, o *progOption) {
			words := []string{name}
			global := name == "find" && strings.Contains("-H -L -P -D -O", o.name)
			switch {
			case global:
				// find -H -L -P -D opts -Olevel come before the starting
				// points.
				words = append(append(words, optionWord(spec, o, "x")...), ".", "-print")
				o = spec.options["-print"]
			case name == "find":
				words = append(words, ".")
			case name == "rg":
				words = append(words, "-e", "x")
			}
			if sub != "" {
				words = append(words, sub)
			}
			switch {
			case (name == "find" || spec.hook == "fd") && o.effect == effRun:
				words = append(words, o.name, "true", ";")
			case spec.style == styleSingle && o.value == valOptional:
				words = append(words, o.name+"=x") // Go's flags: -buildvcs=false
			case o.flags != nil:
				// A list of another tool's flags: one it knows.
				f := sortedKeys(o.flags)[0]
				if o.flags[f] == valRequired {
					f += "=x"
				}
				words = append(words, optionWord(spec, o, f)...)
			default:
				words = append(words, optionWord(spec, o, "x")...)
			}
			if name == "node" {
				words = append(words, "app.js")
			}
			src := strings.Join(words, " ")
			for _, c := range Analyze(src).Commands {
				if strings.Contains(c.Unanalysable, "not understood") {
					t.Errorf("%s: %s", src, c.Unanalysable)
				}
			}
		}
		for _, n := range sortedKeys(spec.options) {
			try("", spec.options[n])
		}
		for _, sn := range sortedKeys(spec.subs) {
			for _, n := range sortedKeys(spec.subs[sn].options) {
				try(sn, spec.subs[sn].options[n])
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
