package testenv_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// logCalls are the slog methods and functions whose arguments hold
// key-value pairs or a key (slog.String, slog.Any…).
var logCalls = map[string]bool{
	"Debug": true, "Info": true, "Warn": true, "Error": true,
	"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true,
	"Log": true, "LogAttrs": true, "With": true,
	"String": true, "Any": true, "Int": true, "Int64": true, "Bool": true, "Duration": true, "Group": true,
}

// TestLogErrorKey keeps one log key for errors across the module: "err"
// (COMMON rules; operators search and alert on it). It fails on any slog
// call that passes the literal "error" as a key: as a non-final argument of
// a logging call, or as the key of slog.String, slog.Any….
func TestLogErrorKey(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		bad = append(bad, errorKeys(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d Go files under %s: the walk missed the module", checked, root)
	}
	for _, b := range bad {
		t.Errorf(`%s: log key "error": use "err"`, b)
	}
}

// errorKeys returns the positions of "error" used as a log key in f.
func errorKeys(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !logCalls[sel.Sel.Name] {
			return true
		}
		attr := sel.Sel.Name == "String" || sel.Sel.Name == "Any" || sel.Sel.Name == "Int" || sel.Sel.Name == "Int64" ||
			sel.Sel.Name == "Bool" || sel.Sel.Name == "Duration" || sel.Sel.Name == "Group"
		if attr {
			// slog.String("error", …): only the slog package's helpers.
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "slog" {
				return true
			}
		}
		for i, a := range call.Args {
			if !attr && i == len(call.Args)-1 {
				break // a last argument is a message or a value, never a key
			}
			if attr && i > 0 {
				break
			}
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && s == "error" {
					out = append(out, fset.Position(lit.Pos()).String())
				}
			}
		}
		return true
	})
	return out
}

func TestErrorKeysFindsBoth(t *testing.T) {
	src := `package p
func f() {
	log.Warn("x", "error", err)
	log.LogAttrs(ctx, l, "m", slog.Any("error", err))
	log.Warn("x", "err", err)
	fmt.Errorf("error")
	t.Error("error")
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := errorKeys(fset, f); len(got) != 2 {
		t.Errorf("errorKeys found %v, want the two \"error\" keys (lines 3 and 4)", got)
	}
}
