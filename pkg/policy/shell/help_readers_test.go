package shell

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Readers of help output that the generic option-column reader cannot
// read: find's columns of single-dash words, go's per-command help, and
// long help whose descriptions start lines with options.

// shallowLines keeps the lines of out indented by at most n spaces.
func shallowLines(out string, n int) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if line != "" && len(line)-len(strings.TrimLeft(line, " ")) <= n {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// findHelpTerms turns find --help's sections (positional options, normal
// options, tests, actions, other options) into one term a line, as a man
// page's terms: "-amin N", "-fprintf FILE FORMAT", "-delete". The
// operators' section ("( EXPR ) ! EXPR -not EXPR…") and the options
// before the starting points (-H -L -P -D -O, in the usage line) are not
// read; the table lists them.
func findHelpTerms(out string) string {
	var b strings.Builder
	in, other := false, false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Positional options"):
			in = true
			continue
		case strings.HasPrefix(line, "Other common options"):
			other = true
			continue
		case strings.HasPrefix(line, "Valid arguments"), strings.HasPrefix(line, "Operators"):
			in = false
		}
		if !in || !strings.HasPrefix(line, " ") {
			continue
		}
		toks := strings.Fields(line)
		if other {
			toks = toks[:1] // "--help   display this help and exit"
		}
		for i, tok := range toks {
			if len(tok) < 2 || tok[0] != '-' || !isOptChar(strings.TrimLeft(tok, "-")[0]) {
				continue
			}
			term := tok
			if i+1 < len(toks) && toks[i+1][0] != '-' {
				term += " " + toks[i+1]
			}
			b.WriteString(term + "\n")
		}
	}
	return b.String()
}

var (
	// goUsageFlagRE: "[-o output]", "[-json]", "[-go=version]" in a usage
	// line.
	goUsageFlagRE = regexp.MustCompile(`\[(-[a-zA-Z][a-zA-Z0-9.-]*)([= ][a-z]+)?\]`)
	// goProseFlagRE: "The -compiled flag", "the -u=patch flag": prose that
	// names a flag without its value's shape.
	goProseFlagRE = regexp.MustCompile(`[Tt]he (-[a-z][a-zA-Z0-9.]*)(=\S*)? flags?\b`)
)

// goHelpTerms reads `go help TOPIC` for each topic ("mod tidy": go help
// mod tidy) and returns its flags one a line, as a man page's terms: the
// flag lines ("\t-C dir", "  -c int", "\t-run=\"\""), the usage line's
// bracketed flags ("[-o output]") and the flags its prose names ("The
// -compiled flag"), whose value shape it does not show ("-compiled
// <either>").
func goHelpTerms(t *testing.T, topics []string) string {
	t.Helper()
	var b strings.Builder
	for _, topic := range topics {
		out, err := exec.Command("go", append([]string{"help"}, strings.Fields(topic)...)...).Output()
		if err != nil {
			t.Fatalf("go help %s: %v", topic, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			b.WriteString(goFlagLine(line))
			for _, m := range goUsageFlagRE.FindAllStringSubmatch(line, -1) {
				b.WriteString(m[1] + strings.Replace(m[2], "=", " ", 1) + "\n")
			}
			for _, m := range goProseFlagRE.FindAllStringSubmatch(line, -1) {
				b.WriteString(m[1] + "<either>\n")
			}
		}
	}
	return b.String()
}

// goFlagLine returns the term of a flag line of go's help ("\t-C dir" →
// "-C dir\n"), "" for any other line. A description is indented deeper
// (two tabs).
func goFlagLine(line string) string {
	trimmed := strings.TrimLeft(line, " \t")
	indent := line[:len(line)-len(trimmed)]
	if indent == "" || strings.Count(indent, "\t") > 1 || len(indent) > 6 || len(trimmed) < 2 ||
		trimmed[0] != '-' || !isOptChar(trimmed[1]) {
		return ""
	}
	f := strings.Fields(trimmed)
	name, val, hasVal := strings.Cut(f[0], "=")
	if hasVal || len(f) > 1 || val != "" {
		return name + " value\n"
	}
	return name + "\n"
}

// goLeftOut are go's commands the table leaves out on purpose, so that
// they ask as not understood: go bug opens a browser, go tool runs a tool
// go.mod may name, go telemetry changes go's settings.
var goLeftOut = []string{"bug", "tool", "telemetry"}

// TestGoSubcommandsKnown: every command `go help` lists is in the table or
// left out on purpose, so a new version's commands surface here.
func TestGoSubcommandsKnown(t *testing.T) {
	out, err := exec.Command("go", "help").Output()
	if err != nil {
		t.Fatalf("go help: %v", err)
	}
	goSpec := BuiltinPrograms().byName["go"]
	var cmds []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "The commands are"):
			in = true
		case strings.HasPrefix(line, "Use "):
			in = false
		case in && strings.HasPrefix(line, "\t"):
			cmds = append(cmds, strings.Fields(line)[0])
		}
	}
	if len(cmds) < 15 {
		t.Fatalf("go help lists %d commands, want more:\n%s", len(cmds), out)
	}
	for _, c := range cmds {
		if goSpec.subs[c] == nil && !slices.Contains(goLeftOut, c) {
			t.Errorf("go %s is neither in the program table nor left out on purpose", c)
		}
	}
	for _, c := range goLeftOut {
		if goSpec.subs[c] != nil {
			t.Errorf("go %s is left out on purpose but the table lists it", c)
		}
	}
}

// TestHelpReaders pins the help formats the readers above turn into
// terms.
func TestHelpReaders(t *testing.T) {
	find := findHelpTerms("Usage: find [-H]\nOperators:\n      ( EXPR )   -not EXPR\n\n" +
		"Positional options (always true):\n      -daystart -regextype\n" +
		"Tests (N can be +N or -N or N):\n      -amin N -anewer FILE -empty\n" +
		"Actions:\n      -fprintf FILE FORMAT -print\n      -exec COMMAND ; -ok COMMAND ;\n" +
		"Other common options:\n      --help                   display this help and exit\n" +
		"Valid arguments for -D:\nexec, opt\n")
	want := "-daystart\n-regextype\n-amin N\n-anewer FILE\n-empty\n-fprintf FILE\n-print\n-exec COMMAND\n-ok COMMAND\n--help\n"
	if find != want {
		t.Errorf("findHelpTerms = %q, want %q", find, want)
	}
	for line, want := range map[string]string{
		"\t-C dir": "-C value\n", "\t-a": "-a\n", "  -c int": "-c value\n", "\t-run=\"\"": "-run value\n",
		"\t\t-buildvcs=true to error": "", "\tgo build -o x": "", "  \t-http": "-http\n",
	} {
		if got := goFlagLine(line); got != want {
			t.Errorf("goFlagLine(%q) = %q, want %q", line, got, want)
		}
	}
	if got := shallowLines("  -a  x\n          -b  y\n", 2); got != "  -a  x\n" {
		t.Errorf("shallowLines = %q", got)
	}
}
