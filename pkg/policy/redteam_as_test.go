package policy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRedteamASSearchArgumentsAreWordsOfTheHostsCommandLine: hosts run
// their search tools by spawning rg or git grep with each argument one
// word of the command line, not always after -e or -- (Gemini CLI's
// search_file_content, Crush's grep). A value that begins with '-' is then
// an option — rg --pre=sh runs sh on every file searched — and a filter
// that begins with ':' a git pathspec with magic (red team AS F1, F1b).
// The real programs show the premise; every such value asks, under any
// key and any search tool.
func TestRedteamASSearchArgumentsAreWordsOfTheHostsCommandLine(t *testing.T) {
	needPrograms(t, "rg", "git")
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("touch "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Gemini CLI's ripgrep argv with fixed_strings: the pattern bare (rg
	// then takes the path for the pattern and searches its working
	// directory: the host's project, here dir alone).
	rg := exec.Command("rg", "--json", "--ignore-case", "--fixed-strings", "--pre=sh", "--threads", "4", dir)
	rg.Dir = dir
	_ = rg.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("test premise: rg did not run the file through sh with the pattern --pre=sh: %v", err)
	}
	// Its git grep argv: a pattern -O<cmd> runs the command.
	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_ = cmd.Run()
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "xyz"), []byte("xyz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker2 := filepath.Join(repo, "ran-O")
	git("grep", "--untracked", "-n", "-E", "--ignore-case", "-Otouch "+marker2+"; true", "--", "xyz")
	if _, err := os.Stat(marker2); err != nil {
		t.Fatalf("test premise: git grep did not run the -O command: %v", err)
	}

	b := builtinPolicy(t)
	for _, c := range []struct {
		tool string
		args map[string]any
		want policy.Action
	}{
		{"search_file_content", map[string]any{"pattern": "--pre=sh", "fixed_strings": true}, policy.Ask},
		{"search_file_content", map[string]any{"pattern": "-Otouch /tmp/x; true", "include": "xyz"}, policy.Ask},
		{"search_file_content", map[string]any{"pattern": "TODO", "include": ":(top).kube/config"}, policy.Ask},
		{"search_file_content", map[string]any{"pattern": "TODO", "include": ":/src/x.go"}, policy.Ask},
		{"grep", map[string]any{"pattern": "--pre=sh"}, policy.Ask},
		{"Grep", map[string]any{"pattern": "-f/home/dev/.kube/config"}, policy.Ask},
		{"Grep", map[string]any{"pattern": "x", "glob": "--pre=sh"}, policy.Ask},
		{"grep_search", map[string]any{"query": "--pre=sh"}, policy.Ask},
		{"search_files", map[string]any{"regex": "--pre=sh", "path": "."}, policy.Ask},
		// Ordinary searches pass.
		{"search_file_content", map[string]any{"pattern": "TODO", "include": "*.go"}, policy.Allow},
		{"Grep", map[string]any{"pattern": "func main", "glob": "*.go"}, policy.Allow},
		{"Grep", map[string]any{"pattern": "a-b"}, policy.Allow},
	} {
		d := b.Evaluate(policy.Call{Tool: c.tool, Arguments: mustJSON(t, c.args), Cwd: "/home/dev/proj"})
		if d.Action != c.want {
			t.Errorf("%s %v: %s (%s), want %s", c.tool, c.args, d.Action, d.Reason, c.want)
		} else if c.want == policy.Ask && !strings.Contains(d.Reason, "begins with") {
			t.Errorf("%s %v asks for another reason: %s", c.tool, c.args, d.Reason)
		}
	}
}

// TestRedteamASWindowsProfileUnderWSL: under WSL the Windows profile is a
// second home whose tools keep their tokens there, some under Windows
// names (red team AS F2); a recursive read of a directory above it meets
// the rule through its wildcards, as a read of the home meets ~/.ssh.
func TestRedteamASWindowsProfileUnderWSL(t *testing.T) {
	wantActionsIn(t, builtinPolicy(t), "/home/dev/proj", []bashCase{
		{`cat /mnt/c/Users/dev/.kube/config`, policy.Deny}, // the home's rule, through the profile
		{`cat /mnt/c/Users/dev/_netrc`, policy.Ask},
		{`cat '/mnt/c/Users/dev/AppData/Roaming/GitHub CLI/hosts.yml'`, policy.Deny},
		{`grep -r token /mnt/c/Users/dev`, policy.Deny},
		{`grep -r token /mnt/c`, policy.Deny},
		{`cat /mnt/c/Users/dev/Documents/notes.txt`, policy.Allow},
		{`grep -r token /mnt/c/Users/dev/Documents`, policy.Allow},
		{`grep -r token src`, policy.Allow},
	})
}
