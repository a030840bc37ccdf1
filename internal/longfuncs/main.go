package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// long is one function over the limit, or one interface declaring more
// methods than -wide.
type long struct {
	pos   token.Position
	name  string
	lines int // lines of a function, methods of an interface
}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func main() {
	limit := flag.Int("max", 80, "report functions longer than this many lines")
	quiet := flag.Bool("q", false, "print only the count")
	wideMax := flag.Int("wide", 10, "report interfaces declaring more than this many methods")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var all, wide []long
	for _, dir := range dirs {
		found, ifaces, err := scan(dir, *limit, *wideMax)
		if err != nil {
			fmt.Fprintln(os.Stderr, "longfuncs:", err)
			os.Exit(2)
		}
		all, wide = append(all, found...), append(wide, ifaces...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].lines != all[j].lines {
			return all[i].lines > all[j].lines
		}
		return all[i].pos.String() < all[j].pos.String()
	})
	if !*quiet {
		for _, l := range all {
			fmt.Printf("%4d  %s:%d  %s\n", l.lines, l.pos.Filename, l.pos.Line, l.name)
		}
	}
	fmt.Printf("%d functions over %d lines\n", len(all), *limit)
	if !*quiet {
		for _, w := range wide {
			fmt.Printf("%4d  %s:%d  %s (interface methods)\n", w.lines, w.pos.Filename, w.pos.Line, w.name)
		}
	}
	fmt.Printf("%d interfaces declaring more than %d methods\n", len(wide), *wideMax)
}

// scan returns the functions over limit lines in the non-test Go files
// under root.
func scan(root string, limit, wideMax int) ([]long, []long, error) {
	fset := token.NewFileSet()
	var out, wide []long
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(src) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		wide = append(wide, wideInterfaces(fset, f, wideMax)...)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > limit {
				out = append(out, long{pos: start, name: funcName(fn), lines: n})
			}
		}
		return nil
	})
	return out, wide, err
}

// wideInterfaces returns f's interface types that declare more than max
// methods. An interface that embeds others is their union; it counts only
// the methods it declares itself (issue 31's store is a composition of
// small roles).
func wideInterfaces(fset *token.FileSet, f *ast.File, max int) []long {
	var out []long
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		it, ok := ts.Type.(*ast.InterfaceType)
		if !ok {
			return true
		}
		m := 0
		for _, field := range it.Methods.List {
			if _, ok := field.Type.(*ast.FuncType); ok {
				m += len(field.Names)
			}
		}
		if m > max {
			out = append(out, long{pos: fset.Position(ts.Pos()), name: ts.Name.Name, lines: m})
		}
		return true
	})
	return out
}

// funcName is fn's name with its receiver type: (*Broker).handleRequest.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + star + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
