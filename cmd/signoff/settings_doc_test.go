package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// helpFlags runs `signoff <args> --help` and returns each flag's help text
// (its line of PrintDefaults and the usage under it), by flag name.
func helpFlags(t *testing.T, args ...string) map[string]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	run(context.Background(), append(args, "--help"), strings.NewReader(""), &stdout, &stderr)
	flags := map[string]string{}
	var name string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "  -") {
			name = strings.Fields(line)[0][1:]
			flags[name] = line
			continue
		}
		if name != "" && strings.HasPrefix(line, "    \t") {
			flags[name] += " " + strings.TrimSpace(line)
		}
	}
	if len(flags) < 10 {
		t.Fatalf("signoff %s --help lists %d flags:\n%s", strings.Join(args, " "), len(flags), stderr.String())
	}
	return flags
}

var (
	docFlag = regexp.MustCompile("`--([a-z][a-z0-9-]*)`")
	docCode = regexp.MustCompile("`([^`]+)`")
)

// TestTheSettingsTableOfTheDocsIsTrue reads the Settings table of
// docs/AGENTS.md: every flag it names is a flag of the commands the row
// says (hooks, gateway, or both), with the documented default in its help,
// and the documented environment variable is SIGNOFF_ + the flag's name —
// the name the flag reads from the environment.
func TestTheSettingsTableOfTheDocsIsTrue(t *testing.T) {
	doc, err := os.ReadFile("../../docs/AGENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## Settings\n")
	if !ok {
		t.Fatal("docs/AGENTS.md has no Settings section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	commands := map[string]map[string]string{
		"claude-code": helpFlags(t, "hook", "claude-code"),
		"codex":       helpFlags(t, "hook", "codex"),
		"gateway":     helpFlags(t, "mcp-gateway"),
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Errorf("a Settings row without its columns: %s", line)
			continue
		}
		flagCell, envCell, defCell := cells[1], cells[2], cells[3]
		var names []string
		for _, m := range docFlag.FindAllStringSubmatch(flagCell, -1) {
			names = append(names, m[1])
		}
		on := []string{"claude-code", "codex", "gateway"}
		switch {
		case strings.Contains(flagCell, "(hooks)"):
			on = []string{"claude-code", "codex"}
		case strings.Contains(flagCell, "(gateway)"):
			on = []string{"gateway"}
		}
		for _, cmd := range on {
			for _, n := range names {
				if _, ok := commands[cmd][n]; !ok {
					t.Errorf("docs/AGENTS.md names --%s for %s; it has no such flag", n, cmd)
				}
			}
		}
		if m := regexp.MustCompile(`SIGNOFF_[A-Z_]+`).FindString(envCell); m != "" {
			want := "SIGNOFF_" + strings.ToUpper(strings.ReplaceAll(names[0], "-", "_"))
			if m != want {
				t.Errorf("docs/AGENTS.md: --%s's variable is %s, documented as %s", names[0], want, m)
			}
		}
		// Defaults: one per flag, in order ("`5s`, `2`").
		var defs []string
		for _, m := range docCode.FindAllStringSubmatch(defCell, -1) {
			defs = append(defs, m[1])
		}
		if len(defs) != len(names) {
			continue // a default written in words, or a row of several flags without defaults
		}
		for i, n := range names {
			for _, cmd := range on {
				help := commands[cmd][n]
				if help != "" && !strings.Contains(help, "default "+defs[i]) && !strings.Contains(help, `default "`+defs[i]+`"`) &&
					!strings.Contains(help, "default: "+defs[i]) {
					t.Errorf("docs/AGENTS.md: --%s defaults to %s; signoff %s --help says: %s", n, defs[i], cmd, help)
				}
			}
		}
	}
	if rows < 10 {
		t.Fatalf("the Settings table has %d flag rows; the extraction is broken", rows)
	}
}
