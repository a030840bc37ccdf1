package quickstart

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// benchSelector is a -bench, -run, -test.bench or -test.run argument
	// of scripts/bench.sh, quoted or not.
	benchSelector = regexp.MustCompile(`-(?:test\.)?(bench|run)='?([^'\s]+)'?`)
	// benchPackage is a package directory argument: ./pkg/policy/.
	benchPackage = regexp.MustCompile(`\s(\./[a-z0-9_/.-]+?)/?(?:\s|$)`)
	testFunc     = regexp.MustCompile(`(?m)^func ((?:Benchmark|Test)[A-Za-z0-9_]*)\(`)
)

// TestEveryBenchmarkOfMakeBenchExists reads scripts/bench.sh (`make
// bench`) and the commands of docs/BENCHMARKS.md: every -bench and -run
// selector they pass matches a benchmark or test of the package they run.
// A renamed benchmark otherwise drops out of `make bench` silently: `go
// test -bench` runs nothing and passes.
func TestEveryBenchmarkOfMakeBenchExists(t *testing.T) {
	checked := checkSelectors(t, filepath.Join("scripts", "bench.sh"), true)
	if checked < 5 {
		t.Fatalf("found %d selectors in scripts/bench.sh; the extraction is broken", checked)
	}
	if checked = checkSelectors(t, filepath.Join("docs", "BENCHMARKS.md"), false); checked < 5 {
		t.Fatalf("found %d selectors in docs/BENCHMARKS.md; the extraction is broken", checked)
	}
}

// checkSelectors checks the -bench and -run selectors of one file and
// returns how many it checked. With carry, a line without a package (a
// compiled test binary run) uses the packages of the last `go test` line;
// without, only `go test` lines naming a package are read.
func checkSelectors(t *testing.T, name string, carry bool) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	var lastPkgs []string
	checked := 0
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		var pkgs []string
		for _, m := range benchPackage.FindAllStringSubmatch(line, -1) {
			pkgs = append(pkgs, m[1])
		}
		switch {
		case !carry && (len(pkgs) == 0 || !strings.Contains(line, "go test")):
			continue
		case strings.Contains(line, "go test") && len(pkgs) > 0:
			lastPkgs = pkgs
		case len(pkgs) == 0:
			pkgs = lastPkgs
		}
		for _, m := range benchSelector.FindAllStringSubmatch(line, -1) {
			sel := m[2]
			if sel == "^$" || sel == "." {
				continue
			}
			if len(pkgs) == 0 {
				t.Errorf("%s:%d: -%s=%s without a package", name, i+1, m[1], sel)
				continue
			}
			// A selector is split on '/' into one pattern per level of
			// sub-benchmarks; the top level names the function.
			top, _, _ := strings.Cut(sel, "/")
			if _, err := regexp.Compile(top); err != nil {
				t.Errorf("%s:%d: -%s=%s: %v", name, i+1, m[1], sel, err)
				continue
			}
			// Each alternative must select something: BenchmarkA|BenchmarkB
			// with B gone still runs A and passes.
			for _, alt := range strings.Split(top, "|") {
				altRE, err := regexp.Compile(alt)
				if err != nil { // an alternative inside a group: judge the whole
					altRE = regexp.MustCompile(top)
				}
				if !packageHasFunc(t, pkgs, m[1], altRE) {
					t.Errorf("%s:%d: -%s=%s: %q matches no %s function in %s", name, i+1, m[1], sel, alt, m[1], strings.Join(pkgs, " "))
				}
			}
			checked++
		}
	}
	return checked
}

// packageHasFunc reports whether a _test.go file of one of pkgs declares a
// Benchmark (kind "bench") or Test (kind "run") function re matches.
func packageHasFunc(t *testing.T, pkgs []string, kind string, re *regexp.Regexp) bool {
	t.Helper()
	prefix := "Test"
	if kind == "bench" {
		prefix = "Benchmark"
	}
	for _, pkg := range pkgs {
		files, err := filepath.Glob(filepath.Join(repoRoot, pkg, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range testFunc.FindAllStringSubmatch(string(data), -1) {
				if strings.HasPrefix(m[1], prefix) && re.MatchString(m[1]) {
					return true
				}
			}
		}
	}
	return false
}
