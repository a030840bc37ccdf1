package policy

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// rgTypeLines parses "name: glob, glob" lines (rg --type-list) into
// their globs by type.
func rgTypeLines(text string) map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		name, list, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if ok && !strings.ContainsAny(name, " \t") {
			m[name] = strings.Split(list, ", ")
		}
	}
	return m
}

// checkRgTypesCover reports every glob of a type the file tools know that
// rgTypeGlobs does not list: a file that version's type filter reads and
// the policy would not judge.
func checkRgTypesCover(t *testing.T, source string, types map[string][]string) {
	t.Helper()
	for _, name := range shell.RgTypeNames() {
		globs := shell.RgTypeGlobs(name)
		for _, g := range types[name] {
			if !slices.Contains(globs, g) {
				t.Errorf("%s: type %s reads %s, which shell.RgTypeGlobs(%q) does not list", source, name, g, name)
			}
		}
	}
}

// The file tools' ripgrep type table is the union of the versions' globs:
// it lists every glob of ripgrep 13's table (the shell analysis', copied
// from rg 13.0.0's --type-list) and of the rg on PATH.
func TestRgTypeGlobsAreTheUnionOfRipgrepVersions(t *testing.T) {
	src, err := os.ReadFile("shell/programs_rgtypes.go")
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile("(?s)const rgTypeList = `(.*?)`").FindSubmatch(src)
	if list == nil {
		t.Fatal("shell/programs_rgtypes.go holds no rgTypeList")
	}
	rg13 := rgTypeLines(string(list[1]))
	if len(rg13["sh"]) == 0 || len(rg13["py"]) == 0 {
		t.Fatalf("rgTypeList parsed to %d types without sh or py", len(rg13))
	}
	checkRgTypesCover(t, "ripgrep 13 (the shell analysis' table)", rg13)

	if _, err := exec.LookPath("rg"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ripgrep is not installed: %v (scripts/test-deps.sh installs it)", err)
		}
		t.Skipf("ripgrep is not installed: %v", err)
	}
	out, err := exec.Command("rg", "--type-list").Output()
	if err != nil {
		t.Fatal(err)
	}
	version, _ := exec.Command("rg", "--version").Output()
	checkRgTypesCover(t, "rg --type-list of "+strings.SplitN(string(version), "\n", 2)[0], rgTypeLines(string(out)))
}
