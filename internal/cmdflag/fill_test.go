package cmdflag

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// TestFill checks the precedence (command line, environment, file) and how
// a list in the file reaches a flag.
func TestFill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("a: file\nb: file\nc: file\nl: [x, y]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, lists := range []bool{true, false} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		a, b, c := fs.String("a", "", ""), fs.String("b", "", ""), fs.String("c", "", "")
		var l listFlag
		fs.Var(&l, "l", "")
		fs.String("config", "", "")
		t.Setenv("SIGNOFF_B", "env")
		t.Setenv("SIGNOFF_CONFIG", path)
		if err := fs.Parse([]string{"-a", "line"}); err != nil {
			t.Fatal(err)
		}
		if err := Fill(fs, "config", nil, lists); err != nil {
			t.Fatal(err)
		}
		want := "x,y"
		if !lists {
			want = "[x y]"
		}
		if *a != "line" || *b != "env" || *c != "file" || l.String() != want {
			t.Errorf("lists %v: a=%q b=%q c=%q l=%q, want line env file %q", lists, *a, *b, *c, l.String(), want)
		}
	}
}

func TestReadConfigUnknownKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("zz: 1\nconfig: x\na: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("a", "", "")
	fs.String("config", "", "")
	file, err := ReadConfig(path, fs, "config")
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), `unknown key "config"`) || file["zz"] == nil {
		t.Fatalf("ReadConfig = %v, %v; want the file and the first unknown key, config", file, err)
	}
}
