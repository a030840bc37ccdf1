package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandTextKeepsWordBoundaries (display red team, D9/D10): two
// commands whose words differ only in where the blanks are have different
// texts, and grants made for one never cover the other.
func TestCommandTextKeepsWordBoundaries(t *testing.T) {
	dry := Analyze(`git clean -fdx -e keep --dry-run`)
	wet := Analyze(`git clean -fdx '-e keep --dry-run'`)
	if a, b := CommandText(dry.Commands[0].Words), CommandText(wet.Commands[0].Words); a == b {
		t.Fatalf("both read %q", a)
	}
	if got := CommandText(wet.Commands[0].Words); got != `git clean -fdx '-e keep --dry-run'` {
		t.Errorf("CommandText = %q", got)
	}
	if p := AlwaysPatterns(dry); PrefixCovered(wet, p) {
		t.Errorf("the grant %q of the dry run covers %q", p, "git clean -fdx '-e keep --dry-run'")
	}
	if p := AlwaysPatterns(wet); PrefixCovered(dry, p) {
		t.Errorf("the grant %q covers the dry run", p)
	}
}

// TestCommandTextReadsBackAsItsWords: bash, given the text, passes the
// program exactly the words (ground truth: a real bash prints them).
func TestCommandTextReadsBackAsItsWords(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	words := []string{"printf", "%s\\n", "a b", "", "it's", "*.go", "$HOME", "`id`", "a;b", "x|y", "~/x", "a~b",
		"[", "]", "-e .env --dry-run", "tab\there", "new\nline", "back\\slash", "{a,b}", "#c", "!x", "é"}
	out, err := exec.Command(bash, "-c", CommandText(words)).Output()
	if err != nil {
		t.Fatalf("bash -c %q: %v", CommandText(words), err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var want []string
	for _, w := range words[2:] {
		want = append(want, strings.Split(w, "\n")...)
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("bash read %q back as %q, want %q", CommandText(words), got, want)
	}
}

// TestCommandTextsQuoteBlanksBesideExpansions (red team O, O8): a
// command with an expansion or a pattern keeps its words as written, but a
// word with a blank is still quoted, so one word does not read as three.
func TestCommandTextsQuoteBlanksBesideExpansions(t *testing.T) {
	a := Analyze(`git clean -fdx '-e keep --dry-run' ~/proj`)
	if got, _ := CommandTexts(&a.Commands[0]); got != `git clean -fdx '-e keep --dry-run' ~/proj` {
		t.Errorf("CommandTexts = %q", got)
	}
}

// TestCommandTextsBesideExpansionsReadBackAsTheCommand: a command with an
// expansion or a pattern is shown as written, and what bash makes of the
// text shown is what it makes of the command (ground truth: a real bash
// prints both commands' words in a directory holding a directory named ~,
// files with blanks and a home of its own). Before, rm -rf '~' "$x" read
// as rm -rf ~ $x (the home), rm "a b"* as rm 'a b*' (one name, not a
// pattern) and rm "$x y" as rm '"$x y"' (a name with quotes in it).
func TestCommandTextsBesideExpansionsReadBackAsTheCommand(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	dir, home := t.TempDir(), t.TempDir()
	for _, d := range []string{"~", "~/sub", "$HOME", "a b1", "a b2", "x*y"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "h1"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	printWords := func(args string) string {
		cmd := exec.Command(bash, "-c", `x='1 2'; printf '[%s]\n' `+args)
		cmd.Dir, cmd.Env = dir, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", args, err)
		}
		return string(out)
	}
	for _, args := range []string{
		`-rf '~' $x`, `-rf "~" "$x"`, `\~/sub $x`, `'$(id)' $x`, `'a;b' $x`, `"a b"*`, `-rf '~/'*`, `-rf '~'/*`,
		`"$x y"`, `'$HOME'/* $x`, `\$HOME $x`, `"x*"y $x`, `~/h* $x`, `~ $x`, `'' $x`, `"a b"? '*'`,
	} {
		a := Analyze("rm " + args)
		if len(a.Commands) == 0 || a.Commands[0].Name != "rm" {
			t.Fatalf("rm %s: %d commands", args, len(a.Commands))
		}
		shown, _ := CommandTexts(&a.Commands[0])
		rest, ok := strings.CutPrefix(shown, "rm ")
		if !ok {
			t.Fatalf("rm %s is shown as %q", args, shown)
		}
		if got, want := printWords(rest), printWords(args); got != want {
			t.Errorf("rm %s is shown as %q, which bash reads as\n%s want\n%s", args, shown, got, want)
		}
	}
}
