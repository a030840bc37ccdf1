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

// long is one function over the limit.
type long struct {
	pos   token.Position
	name  string
	lines int
}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func main() {
	limit := flag.Int("max", 80, "report functions longer than this many lines")
	quiet := flag.Bool("q", false, "print only the count")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var all []long
	for _, dir := range dirs {
		found, err := scan(dir, *limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "longfuncs:", err)
			os.Exit(2)
		}
		all = append(all, found...)
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
}

// scan returns the functions over limit lines in the non-test Go files
// under root.
func scan(root string, limit int) ([]long, error) {
	fset := token.NewFileSet()
	var out []long
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
	return out, err
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
