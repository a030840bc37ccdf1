package shell

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestZshSpecialParameters holds shell_vars.go to the real zsh: each of
// its special parameters (its own and those of the modules the analysis
// knows it may load: zsh/parameter, zsh/mapfile, zsh/system…) is
// classified, as changing what runs (zshExecParams) or not
// (zshInertSpecials). A zsh that adds one fails here until it is.
func TestZshSpecialParameters(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("zsh is not installed (scripts/test-deps.sh installs it): %v", err)
		}
		t.Skipf("zsh is not installed: %v", err)
	}
	out, err := exec.Command(zsh, "-f", "-c", `zmodload zsh/parameter zsh/mapfile zsh/system zsh/langinfo zsh/termcap zsh/terminfo zsh/zleparameter zsh/datetime zsh/stat 2>/dev/null
for k v in ${(kv)parameters}; do [[ $v == *special* ]] && print -r -- $k; done`).Output()
	if err != nil {
		t.Fatalf("zsh: %v", err)
	}
	names := strings.Fields(string(out))
	if len(names) < 60 {
		t.Fatalf("zsh listed %d special parameters, want the 100 or so of zsh 5.9: %q", len(names), names)
	}
	var unknown []string
	for _, n := range names {
		if !zshExecParams[n] && !zshInertSpecials[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		t.Errorf("zsh's special parameters %q are not classified in shell_vars.go (zshExecParams or zshInertSpecials)", unknown)
	}
	for n := range zshExecParams {
		if !shExecVar(n) {
			t.Errorf("assigning %s is not unanalysable", n)
		}
	}
}
