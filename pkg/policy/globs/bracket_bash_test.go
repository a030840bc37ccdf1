package globs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The differential test of bracket expressions: bash expands generated
// patterns in a directory of decoy files, and the globs of the same words
// must match every name bash matched. They may match more (a class outside
// ASCII, a bracket that is not read exactly), never less: a name bash
// matches and the glob does not is a read the engine would not see.

// bashNames are the decoy files: every single character but '/' and NUL
// that a test can name portably, and pairs that tell where a bracket ends.
func bashNames() []string {
	var names []string
	for c := 1; c < 0x80; c++ {
		if c != '/' && c != '\n' && c != '.' {
			names = append(names, string(rune(c)))
		}
	}
	names = append(names, "é", "ß", "Ω", "٣", "Ｅ")
	for _, s := range []string{"a", "e", "]", "[", "-", ":", "x", "!", "^", ".", `\`, "0", "A", "é", "="} {
		for _, t := range []string{"]", "x", "-", ":", "a", "nv", "e"} {
			names = append(names, s+t)
		}
	}
	names = append(names, ".env", ".xnv", ".Env", "[e]nv", ".[e]nv", "[:alpha:]")
	return names
}

// bracketPieces are the elements generated brackets are made of: the
// regular ones every matcher reads alike and the irregular ones
// (unterminated, unknown, multi-character, a class ending a range).
var bracketPieces = []string{
	"a", "e", "x", "A", "0", "9", "]", "[", "-", "!", "^", ":", "=", ".", `\]`, `\\`, `\-`, `\[`, `\a`,
	"d-f", "--0", "a-", "0-9", "A-Z", "z-a", "!-/", "[.a.]-c", "a-[.e.]", "[.-.]", "[.].]", "[=]=]",
	"[:alpha:]", "[:digit:]", "[:alnum:]", "[:upper:]", "[:lower:]", "[:space:]", "[:blank:]",
	"[:punct:]", "[:print:]", "[:graph:]", "[:cntrl:]", "[:xdigit:]", "[:word:]", "[:foo:]",
	"[=e=]", "[=a=]", "[=é=]", "[.e.]", "[.ch.]", "[.hyphen.]", "[:alpha", "[=e", "[.e", "[:", "[=", "[.",
	"[:alpha:]-f", "a-[:digit:]", "e-[=f=]", "é", "Ω",
}

// genBracketPatterns returns n patterns around one bracket expression,
// from a fixed seed, after the hand-written ones.
func genBracketPatterns(n int) []string {
	pats := []string{
		"[[:alpha:]]", ".[[:alpha:]]nv", ".[[=e=]]nv", ".[[.e.]]nv", ".[![:digit:]]nv", "[]]", `[\]]`, "[a-]",
		"[--0]", "[!a]", "[^a]", "[[]", "[", "[[.-.]]", "[[.hyphen.]]", "[[:foo:]]", "[[:alpha:]", "[[:alpha]",
		"[[=e]", "[[.].]]", "[[=]=]]", "[[:]", "[e-[:alpha:]]", "[[:alpha:]-f]", "[a[:b]c]", "[]a]", "[!]a]",
		"[^]]", "[]-a]", "[a-]]", "[[:alpha:]a", "[\\]", "[a\\", "[!]", "[]", "[[:upper:]]*", "*[[:digit:]]",
	}
	rng := rand.New(rand.NewPCG(12, 2026))
	for len(pats) < n {
		var b strings.Builder
		switch rng.IntN(4) {
		case 0:
			b.WriteByte('.')
		case 1:
			b.WriteString("[e")
		}
		b.WriteByte('[')
		switch rng.IntN(4) {
		case 0:
			b.WriteByte('!')
		case 1:
			b.WriteByte('^')
		}
		for k := 1 + rng.IntN(3); k > 0; k-- {
			b.WriteString(bracketPieces[rng.IntN(len(bracketPieces))])
		}
		if rng.IntN(8) > 0 {
			b.WriteByte(']')
		}
		b.WriteString([]string{"", "", "]", "x", "nv", "*", "?", "[ax]", "]]", "-]"}[rng.IntN(10)])
		pats = append(pats, b.String())
	}
	return pats
}

// bashProgram finds bash; without it the test skips, or fails when CI=true
// (scripts/test-deps.sh installs it).
func bashProgram(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the bracket differential test needs bash: %v (scripts/test-deps.sh installs it)", err)
		}
		t.Skipf("the bracket differential test needs bash: %v", err)
	}
	return bash
}

// bashExpand runs bash in dir with nullglob and dotglob set (after
// prelude) and returns,
// for each word (shell source, unquoted), the names of dir it expanded
// to.
func bashExpand(t *testing.T, bash, dir, locale, prelude string, words []string) [][]string {
	t.Helper()
	var script strings.Builder
	script.WriteString("shopt -s nullglob dotglob\n" + prelude + "\n")
	for i, w := range words {
		fmt.Fprintf(&script, "echo @@%d; printf '%%s\\n' %s\n", i, w)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-s")
	cmd.Stdin = strings.NewReader(script.String())
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=" + locale, "HOME=" + dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash (LC_ALL=%s): %v: %s", locale, err, stderr.String())
	}
	res := make([][]string, len(words))
	cur := -1
	for _, line := range strings.Split(string(out), "\n") {
		var k int
		if _, err := fmt.Sscanf(line, "@@%d", &k); err == nil && strings.HasPrefix(line, "@@") && k == cur+1 {
			cur = k
			continue
		}
		if cur >= 0 && line != "" {
			res[cur] = append(res[cur], line)
		}
	}
	if cur != len(words)-1 {
		t.Fatalf("bash (LC_ALL=%s) printed %d of %d words", locale, cur+1, len(words))
	}
	return res
}

// bashLocales are the locales the test runs bash in: C, and a UTF-8 one
// when the system has it.
func bashLocales(t *testing.T) []string {
	locales := []string{"C"}
	out, err := exec.Command("locale", "-a").Output()
	if err == nil {
		for _, l := range strings.Fields(string(out)) {
			if strings.EqualFold(l, "C.utf8") || strings.EqualFold(l, "C.UTF-8") {
				return append(locales, l)
			}
		}
		for _, l := range strings.Fields(string(out)) {
			if strings.HasSuffix(strings.ToLower(l), ".utf8") {
				return append(locales, l)
			}
		}
	}
	t.Logf("no UTF-8 locale installed: bash runs in the C locale only")
	return locales
}

func bashScratch(t *testing.T) (string, map[string]bool) {
	t.Helper()
	dir := t.TempDir()
	names := map[string]bool{}
	for _, n := range bashNames() {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatalf("decoy %q: %v", n, err)
		}
		names[n] = true
	}
	return dir, names
}

// TestBracketGlobsMatchWhatBashMatches compares the globs of generated
// bracket patterns (AppendUnquoted, the reading of a word's pattern, and
// FromFilterPattern, that of a file-name filter) and Match (a rule's
// pattern, when Check accepts it) with bash.
func TestBracketGlobsMatchWhatBashMatches(t *testing.T) {
	bash := bashProgram(t)
	dir, names := bashScratch(t)
	pats := genBracketPatterns(1500)
	compared, over := 0, 0
	for _, locale := range bashLocales(t) {
		got := bashExpand(t, bash, dir, locale, "", pats)
		for i, p := range pats {
			word, filter := AppendUnquoted(nil, p), FromFilterPattern(p)
			checked := Check(p) == nil
			matched := map[string]bool{}
			for _, n := range got[i] {
				if !names[n] {
					continue // a literal word bash left alone
				}
				matched[n] = true
				if locale == "C" && !isASCII(n) {
					// In the C locale bash matches bytes: é is two
					// characters. The globs match runes; the names rules
					// protect are ASCII, where the two agree.
					continue
				}
				lit := Literal(nil, n)
				switch {
				case !Intersects(word, lit):
					t.Errorf("LC_ALL=%s: bash expands %s to %q, the word's glob %s does not match it", locale, p, n, word)
				case !Intersects(filter, lit):
					t.Errorf("LC_ALL=%s: bash expands %s to %q, the filter's glob %s does not match it", locale, p, n, filter)
				case checked && !Match(p, n):
					t.Errorf("LC_ALL=%s: bash expands %s to %q, Match(%q, %q) is false", locale, p, n, p, n)
				}
			}
			for n := range names {
				compared++
				if !matched[n] && Intersects(word, Literal(nil, n)) {
					over++
				}
			}
		}
	}
	t.Logf("%d patterns × names compared, the globs match %d more than bash (allowed)", compared, over)
}

// TestBracketAcrossWordPartsMatchesBash is the same for words whose
// bracket expressions span quoted parts and expansions: the glob of
// AppendWord must match every name bash expands the word to.
func TestBracketAcrossWordPartsMatchesBash(t *testing.T) {
	bash := bashProgram(t)
	dir, names := bashScratch(t)
	type word struct {
		src   string
		parts []WordPart
	}
	lit := func(s string) WordPart { return WordPart{Text: s} }
	dq := func(s string) WordPart { return WordPart{Text: s, Quoted: true} }
	x := WordPart{Unknown: true, Tok: AnyRun}
	xq := WordPart{Unknown: true, Tok: AnyRun, Quoted: true}
	words := []word{
		{`.["e"]nv`, []WordPart{lit(".["), dq("e"), lit("]nv")}},
		{`.[e"x"]nv`, []WordPart{lit(".[e"), dq("x"), lit("]nv")}},
		{`.[x"]"e]nv`, []WordPart{lit(".[x"), dq("]"), lit("e]nv")}},
		{`".["e]nv`, []WordPart{dq(".["), lit("e]nv")}},
		{`.[e"]"`, []WordPart{lit(".[e"), dq("]")}},
		{`."["e"]"nv`, []WordPart{lit("."), dq("["), lit("e"), dq("]"), lit("nv")}},
		{`[[:alpha:]"]"]`, []WordPart{lit("[[:alpha:]"), dq("]"), lit("]")}},
		{`["!"a]`, []WordPart{lit("["), dq("!"), lit("a]")}},
		{`[!"a"]`, []WordPart{lit("[!"), dq("a"), lit("]")}},
		{`["a-c"]`, []WordPart{lit("["), dq("a-c"), lit("]")}},
		{`[a"-"c]`, []WordPart{lit("[a"), dq("-"), lit("c]")}},
		{`["[:alpha:]"]`, []WordPart{lit("["), dq("[:alpha:]"), lit("]")}},
		{`[[":alpha:"]]`, []WordPart{lit("[["), dq(":alpha:"), lit("]]")}},
		{`.[$X]nv`, []WordPart{lit(".["), x, lit("]nv")}},
		{`.[$Y]nv`, []WordPart{lit(".["), x, lit("]nv")}},
		{`.["$X"]nv`, []WordPart{lit(".["), xq, lit("]nv")}},
		{`$Z]nv`, []WordPart{x, lit("]nv")}},
		{`.[$W`, []WordPart{lit(".["), x}},
		{`$V-z]`, []WordPart{x, lit("-z]")}},
	}
	srcs := make([]string, len(words))
	for i, w := range words {
		srcs[i] = w.src
	}
	// The expansions' values: X=e, Y=]* (a bracket then more text),
	// Z=.[e (a bracket the next literal closes), W=e]nv, V=[a.
	const prelude = `X=e; Y=']*'; Z='.[e'; W='e]nv'; V='['`
	for _, locale := range bashLocales(t) {
		got := bashExpand(t, bash, dir, locale, prelude, srcs)
		for i, w := range words {
			g := AppendWord(nil, w.parts)
			for _, n := range got[i] {
				if names[n] && (locale != "C" || isASCII(n)) && !Intersects(g, Literal(nil, n)) {
					t.Errorf("LC_ALL=%s: bash expands %s to %q, its glob %s does not match it", locale, w.src, n, g)
				}
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestFilterGlobsMatchWhatRgMatches holds FromFilterPattern to ripgrep's
// reading of the generated patterns as -g globs (globset: no POSIX
// classes, [[:alpha:]] is "[:alph" then ']'), in the same decoy
// directory. Without rg the test skips, or fails when CI=true.
func TestFilterGlobsMatchWhatRgMatches(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the filter differential test needs rg: %v (scripts/test-deps.sh installs it)", err)
		}
		t.Skipf("the filter differential test needs rg: %v", err)
	}
	dir, names := bashScratch(t)
	for _, p := range genBracketPatterns(150) {
		cmd := exec.Command(rg, "--files", "--hidden", "--no-ignore", "--no-config", "-g", p)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
				continue // no file matched
			}
			t.Logf("rg -g %q: %v (a glob rg refuses reads nothing)", p, err)
			continue
		}
		g := FromFilterPattern(p)
		for _, n := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			// globset matches bytes (é is two characters to it), as bash
			// does in the C locale: ASCII names only.
			if names[n] && isASCII(n) && !Intersects(g, Literal(nil, n)) {
				t.Errorf("rg -g %s lists %q, the filter's glob %s does not match it", p, n, g)
			}
		}
	}
}
