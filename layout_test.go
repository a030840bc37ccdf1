package signoff_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/signoff-dev/signoff"

// TestPublicPackagesImportNothingInternal fails if a package under pkg/
// depends, directly or not, on one under internal/: a public package must
// build for users who cannot import internal code.
func TestPublicPackagesImportNothingInternal(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./pkg/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list ./pkg/...: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list found %d packages under pkg/, want the public packages:\n%s", len(lines), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, module+"/internal/") {
				t.Errorf("%s depends on %s", fields[0], dep)
			}
		}
	}
}

// maxInterfaceMethods bounds the methods an interface declares itself (its
// embedded interfaces are counted in their own declarations): a consumer
// declares the roles it uses instead of one wide interface.
const maxInterfaceMethods = 10

// TestNoInterfaceIsWiderThanTenMethods parses the non-test Go files of the
// module and fails on an interface that declares more than ten methods.
func TestNoInterfaceIsWiderThanTenMethods(t *testing.T) {
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				return true
			}
			seen++
			methods := 0
			for _, m := range it.Methods.List {
				if _, ok := m.Type.(*ast.FuncType); ok {
					methods += len(m.Names)
				}
			}
			if methods > maxInterfaceMethods {
				t.Errorf("%s: interface %s declares %d methods, want at most %d (compose it from roles)",
					fset.Position(ts.Pos()), ts.Name.Name, methods, maxInterfaceMethods)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("found %d interfaces in the module, want the module's own", seen)
	}
}
