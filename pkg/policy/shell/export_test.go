package shell

import (
	"sort"
	"strings"
	"testing"
)

// Exported for the tests of package shell_test, which judge the table
// through the policy engine.

// Effect is an option's effect, for CommandsFor.
type Effect = effect

// The effects CommandsFor is asked about.
const (
	EffWrite  = effWrite
	EffRun    = effRun
	EffScript = effScript
	EffCode   = effCode
	EffAsk    = effAsk
	EffRead   = effRead
)

// optionWord spells option o of a program with value v the way the
// program reads it.
func optionWord(spec *progSpec, o *progOption, v string) []string {
	switch {
	case o.name == "+":
		return []string{"+" + v}
	case o.value == valOptional && strings.HasPrefix(o.name, "--"):
		return []string{o.name + "=" + v}
	case o.value == valOptional:
		return []string{o.name + v}
	case o.value == valNone:
		return []string{o.name}
	}
	return []string{o.name, v}
}

// valueFor returns a value that makes the option's effect apply.
func valueFor(o *progOption, v string) string {
	if len(o.pathAfter) > 0 {
		return o.pathAfter[0] + v // kubectl -o go-template-file=PATH
	}
	if len(o.when) > 0 {
		return strings.ReplaceAll(o.when[0], "*", v)
	}
	if len(o.unless) > 0 && !o.appliesTo(v) {
		return "evil.key=" + v
	}
	return v
}

// CommandsFor builds, for every option of every entry with the given
// effect, a command that uses it with value v. Sub-command options are
// used after their sub-command, wrapper options before a harmless command.
func CommandsFor(t *testing.T, eff effect, v string) map[string]string {
	t.Helper()
	out := map[string]string{}
	tbl := BuiltinPrograms()
	names := make([]string, 0, len(tbl.byName))
	for n := range tbl.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		spec := tbl.byName[n]
		add := func(sub string, o *progOption) {
			if o.effect != eff {
				return
			}
			words := []string{n}
			if sub != "" {
				words = append(words, sub)
			}
			if (spec.hook == "find" || spec.hook == "fd") && o.effect == effRun {
				// find -exec CMD ARGS… ;, fd -x CMD ARGS… ;: the command is
				// the words up to the ";".
				words = append(append(append(words, o.name), strings.Fields(v)...), ";")
			} else {
				words = append(words, optionWord(spec, o, valueFor(o, v))...)
			}
			switch {
			case spec.wrapper != nil || shHooks[spec.hook] != nil && spec.hook != "find" && spec.hook != "fd":
				words = append(words, "true")
			case spec.hook == "sed":
				words = append(words, "-n", "p", "f")
			case spec.hook == "awk":
				words = append(words, "{print}", "f")
			case spec.hook == "tar":
				words = append(words, "-cf", "a.tar", "src")
			}
			var b strings.Builder
			for i, w := range words {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "'")
			}
			out[n+" "+sub+" "+o.name] = b.String()
		}
		for _, o := range spec.options {
			add("", o)
		}
		for sn, sub := range spec.subs {
			for _, o := range sub.options {
				add(sn, o)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no option of the table has effect %s", eff)
	}
	return out
}
