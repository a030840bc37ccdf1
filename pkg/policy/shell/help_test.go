package shell

import (
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// helpCommands is how TestCompleteTablesMatchHelp asks each program with a
// complete entry for its options. Every complete entry must have one.
var helpCommands = map[string][]string{
	"cat":   {"cat", "--help"},
	"head":  {"head", "--help"},
	"tail":  {"tail", "--help"},
	"wc":    {"wc", "--help"},
	"ls":    {"ls", "--help"},
	"grep":  {"grep", "--help"},
	"curl":  {"curl", "--help", "all"},
	"egrep": {"egrep", "--help"},
	"fgrep": {"fgrep", "--help"},
}

// helpOption is one option a program's help lists: its name and whether
// it takes a value ("" none, "=" required, "=?" optional).
type helpOption struct {
	name, value string
}

var (
	helpItemRE = regexp.MustCompile(`^(--?[A-Za-z0-9#@?:][A-Za-z0-9_.-]*)(\[=|=| <| \[|)(.?)`)
	helpNegRE  = regexp.MustCompile(`--\[no-\]`)
)

// parseHelpOptions reads the option column of --help output (coreutils,
// curl and git style): lines that start with '-' after indentation, items
// separated by ", ", a value shown as =VALUE, [=VALUE], <value> or
// [value]. A short option shares its long form's required value
// ("-c, --bytes=NUM").
func parseHelpOptions(out string) []helpOption {
	var opts []helpOption
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(t, "-") {
			continue
		}
		if i := strings.Index(t, "  "); i >= 0 {
			t = t[:i]
		}
		if i := strings.IndexByte(t, '\t'); i >= 0 {
			t = t[:i]
		}
		neg := helpNegRE.MatchString(t)
		t = helpNegRE.ReplaceAllString(t, "--")
		var line []helpOption
		longValue := ""
		for _, item := range strings.Split(t, ", ") {
			m := helpItemRE.FindStringSubmatch(item)
			if m == nil {
				break
			}
			v := ""
			switch m[2] {
			case "=", " <", " [":
				v = "="
			case "[=":
				v = "=?"
			}
			// "-p, --indicator-style=slash": -p is the long option with
			// that value, not an option taking one.
			fixed := m[2] == "=" && m[3] >= "a" && m[3] <= "z"
			if strings.HasPrefix(m[1], "--") && !fixed {
				longValue = v
			}
			line = append(line, helpOption{m[1], v})
			if neg && strings.HasPrefix(m[1], "--") {
				line = append(line, helpOption{"--no-" + m[1][2:], ""})
			}
		}
		for i := range line {
			if !strings.HasPrefix(line[i].name, "--") && line[i].value == "" && longValue == "=" {
				line[i].value = "="
			}
		}
		opts = append(opts, line...)
	}
	return opts
}

// TestCompleteTablesMatchHelp runs every program whose entry is complete
// and reads its own help: an option the help lists that the entry does not
// (a new version's option, a forgotten one), or that the entry reads with
// a different value shape (a value taken or not), fails the test. The
// programs are the system's (scripts/test-deps.sh installs them); a
// missing one fails.
func TestCompleteTablesMatchHelp(t *testing.T) {
	tbl := BuiltinPrograms()
	var names []string
	for n, s := range tbl.byName {
		if s.complete {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no complete entry in the program table")
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			argv, ok := helpCommands[n]
			if !ok {
				t.Fatalf("complete entry %s has no help command in helpCommands", n)
			}
			if _, err := exec.LookPath(argv[0]); err != nil {
				t.Fatalf("%s is not installed (scripts/test-deps.sh installs it): %v", argv[0], err)
			}
			out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput() // git -h exits 129
			opts := parseHelpOptions(string(out))
			if len(opts) < 3 {
				t.Fatalf("%s: read %d options from its help, want more:\n%s", strings.Join(argv, " "), len(opts), out)
			}
			spec := tbl.byName[n]
			for _, h := range opts {
				name := h.name
				if name == "-NUM" {
					name = "-1" // grep -NUM: the digits are options
				}
				o := spec.options[name]
				if o == nil {
					o = spec.global[name]
				}
				if o == nil {
					t.Errorf("%s: option %s%s is in its help, not in the table", n, h.name, h.value)
					continue
				}
				switch {
				case h.value == "=" && o.value != valRequired:
					t.Errorf("%s: option %s takes a value, the table reads it without one", n, h.name)
				case h.value != "=" && o.value == valRequired:
					t.Errorf("%s: option %s takes no separate value, the table reads the next word as one", n, h.name)
				}
			}
		})
	}
}

// TestParseHelpOptions pins the help formats the test above reads.
func TestParseHelpOptions(t *testing.T) {
	got := parseHelpOptions(`Usage: x
  -c, --bytes=[-]NUM       print the first NUM bytes
  -F, --classify[=WHEN]    append indicator
  -p, --indicator-style=slash  append / indicator to directories
      --help        display this help
 -d, --data <data>          HTTP POST data
     --anyauth              Pick any authentication method
    -u, --[no-]untracked-files[=<mode>]
 -x, --proxy [protocol://]host[:port] Use this proxy
`)
	want := []helpOption{{"-c", "="}, {"--bytes", "="}, {"-F", ""}, {"--classify", "=?"}, {"-p", ""}, {"--indicator-style", "="}, {"--help", ""},
		{"-d", "="}, {"--data", "="}, {"--anyauth", ""}, {"-u", ""}, {"--untracked-files", "=?"},
		{"--no-untracked-files", ""}, {"-x", "="}, {"--proxy", "="}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("option %d: got %v, want %v", i, got[i], want[i])
		}
	}
}
