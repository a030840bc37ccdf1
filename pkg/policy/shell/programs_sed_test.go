package shell

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The sed script reader (programs_sed.go) is held to GNU sed's own
// reading of each script. sed --debug prints the program as it compiled
// it, one command a line; sed --sandbox refuses e, w and r (and s///e,
// s///w), which tells exactly whether the script has any. Both run on
// /dev/null with -n, so no command of the script runs; sed opens the
// files of w as it compiles, so each script runs in an empty directory,
// and one whose w could name a file outside it is not run.

// sedCorpus are scripts that desynced readers of sed: the red team's
// findings, bracket expressions, labels, a/i/c in both forms, braces and
// semicolons, comments, y, other delimiters, addresses. Each is a list
// of -e pieces.
var sedCorpus = [][]string{
	{":a;1e cat .env"}, {":a;w out"}, {":a;s/x/y/e"}, {"ba;e id\n:a"}, {"b a;e id\n:a"}, {"t;e id"},
	{"Tx;e id\n:x"}, {":a#x\ne id"}, {"1{:a};e id"}, {":a 1e id"}, {":a}e id"}, {"b}e id"}, {":a;ta;r in"},
	{"1s/[/]*.*/cat .env/ep"}, {"/[/i]/e cat .env"}, {"\\,[,],e id"}, {"s|[|]|x|e"}, {"s/[^/]/id/e"},
	{"s/[]/]/id/e"}, {"s/[^]/]/id/e"}, {"s/[[:alpha:]/]/id/e"}, {"s/[[.-.]/]/id/e"}, {"s/[[=/=]]/id/e"},
	{"s/[[:]/]:]]/id/e"}, {"s/[\\]/id/e"}, {"s/x/[/e;e id]/"}, {"y/[/]/;e id"}, {"y/[/]/"}, {"s/a/[/g"},
	{"/[/]/w out"}, {"s/[/]/x/w out"}, {"s/[[:space:]]*$//"}, {"s#[/#]#_#g"}, {"s,/usr/local,/opt,g"},
	{"1a\\\ns\ne touch PWNED\n\n"}, {"1i\\\nfoo\ne id"}, {"1c\\\nfoo\\\\\ne id"}, {"1a foo\ne id"},
	{"1a\\\\\ne id"}, {"1a\\\nfoo\\\ne id"}, {"1a\\\\\\\ne id"}, {"1a foo\\\ne id"}, {"1a e id"},
	{"1i\\e id"}, {"$a w out"}, {"1c r in"}, {"1a foo\nw out"}, {"$a\\"}, {"1i\\header"}, {"a\\  x"},
	{"1a\\", "e id"}, {"1a foo", "e id"}, {"1{", "p", "}"}, {"1{", "p"}, {"e\\", "id"}, {"s/a\\", "/e"},
	{"1a foo\\", "w out"}, {"e"}, {"e id"}, {"s/a/b/ e"}, {"s/a/b/ge"}, {"s/a/b/pe3"}, {"s/a/b/k"}, {"k"},
	{"1,2,3p"}, {"p;}"}, {"1{p"}, {"s/a/b"}, {"s/a\n/b/"}, {"s/a\\\n/b/"}, {"1~2,+3e id"}, {"0,/x/e id"},
	{"p x"}, {"s|é|e|"}, {"s/[éè]/e/"}, {"s/é/e/g"}, {"1,5p"}, {"s/a/b/g"}, {":a;N;$!ba;s/\\n/ /g"},
	{"/^#/d"}, {"s/\\([a-z]*\\)/\\1/"}, {"/^func /,/^}/p"}, {"0,/re/p"}, {"2~3p;4,+2p;5,~4p"},
	{"/x/I,/y/Mp"}, {"/a/,/b/{/c/d;s/x/y/2g}"}, {"#n\np"}, {"F;z;=;l;l 20;L;q5"}, {"Q 3"}, {"v 4.2\np"},
	{"y/abc/xyz/"}, {"s/x/y/w out"}, {"W out"}, {"r in"}, {"0r in"}, {"R in"}, {"1!G;h;$!d"}, {"$="},
	{"s/\\t/  /g; s/ *$//"}, {"p;p"}, {"p}"}, {"{p}"}, {"{p};p"}, {"1!{p}"}, {"$!N"}, {"s/x/y/;}"},
	{"s/x/y/#c\ne"}, {"s/x/y/w out\ne id"}, {"w out;e id"}, {"r in;e"}, {"s\\a\\b\\e"}, {"s a b e"},
	{"s\na\nb\ne"}, {"y\na\nb\n"}, {"\\nanp"}, {"\\;x;e id"}, {"s;x;y;e"}, {"s/x/y/\r\ne"},
	{"l;e"}, {"q;e"}, {"q 1 e"}, {"=;e"}, {"1~0e id"}, {"+1e id"}, {"1,~0e id"}, {"1!!e id"}, {"1 ! e id"},
	{"s/[[]/x/e"}, {"s/[[[]/x/e"}, {"s/[a-]/x/;e"}, {"/[[:alpha:]]/e"}, {"s/[[.]/].]]/x/e"},
	{"y/a\\/b/c\\/d/;e"}, {"y,a\\,b,c\\,d,"}, {"s/a/\\/e/"}, {"s/a/\\\n/e"}, {"i\\\n\\\n\ne id"},
	{"a\\\ttab\ne id"}, {"c\\\n  x\\\n  y\ne id"}, {"1a\\", "", "e id"}, {"v;e id"}, {"v 4.2;e id"},
	{"#x;e id"}, {" #x\ne id"}, {"1#x\ne id"}, {"}"}, {"{"}, {"{{p}}"}, {"{;}"}, {"{}"},
}

// sedCheckSafe reports whether running sed on script can only create
// files in its directory: the file name of any w (command or flag) is the
// rest of a line after a w or W, so no such rest may start with / or
// climb with .. (a name under a missing directory fails to open).
func sedCheckSafe(script string) bool {
	for i := 0; i < len(script); i++ {
		if script[i] != 'w' && script[i] != 'W' {
			continue
		}
		rest := strings.TrimLeft(script[i+1:], " \t")
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		if strings.HasPrefix(rest, "/") || strings.Contains(rest, "..") || strings.HasPrefix(rest, "~") {
			return false
		}
	}
	return true
}

// sedNeeded finds GNU sed with --debug and --sandbox (sed 4.6+): without
// it the test skips, or fails when CI=true.
func sedNeeded(t *testing.T) string {
	t.Helper()
	sed, err := exec.LookPath("sed")
	if err == nil {
		var out []byte
		out, err = exec.Command(sed, "--debug", "--sandbox", "-n", "-e", "p", "/dev/null").Output()
		if err == nil && !bytes.HasPrefix(out, []byte("SED PROGRAM:")) {
			err = os.ErrNotExist
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("GNU sed 4.6+ (--debug, --sandbox) is needed to check the sed reader: %v", err)
		}
		t.Skipf("GNU sed 4.6+ (--debug, --sandbox) is not installed: %v", err)
	}
	return sed
}

// gnuSed is GNU sed's reading of a script.
type gnuSed struct {
	sandboxOK   bool   // sed --sandbox accepted it: no e, w, r at all
	sandboxMsg  string // why it refused it otherwise
	eval        bool   // sed --debug printed an e or s///e (read generously)
	writes      []string
	reads       []string
	created     []string // the files sed created as it compiled
	debug       string
	compileFail bool
}

func runGNUSed(t *testing.T, sed string, opts, pieces []string) gnuSed {
	t.Helper()
	var g gnuSed
	args := append([]string{"-n"}, opts...)
	for _, p := range pieces {
		args = append(args, "-e", p)
	}
	run := func(extra ...string) (string, string, error) {
		dir := t.TempDir()
		cmd := exec.Command(sed, append(extra, args...)...)
		cmd.Dir, cmd.Env = dir, []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &out, &errb
		err := cmd.Run()
		if extra[0] == "--debug" {
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					g.created = append(g.created, rel)
				}
				return nil
			})
		}
		return out.String(), errb.String(), err
	}
	_, msg, err := run("--sandbox")
	g.sandboxOK, g.sandboxMsg = err == nil, msg
	out, _, err := run("--debug")
	g.debug, g.compileFail = out, err != nil
	g.eval, g.writes, g.reads = parseSedDebug(out)
	return g
}

var (
	sedDebugAddr = `(?:/(?:\\.|[^/\\])*/[IM]*|\d+~\d+|\d+|\+\d+|~\d+|\$|\[ADDR-NULL\])`
	sedDebugCmd  = regexp.MustCompile(`^ +(` + sedDebugAddr + `(?:,` + sedDebugAddr + `)?)?(!?)(.)(.*)$`)
	sedDebugS    = regexp.MustCompile(`^/(?:\\.|[^/\\])*/`)
	sedDebugFlag = regexp.MustCompile(`^[im]*g?(e?)p?[0-9]*(?:w(.*))?$`)
)

// parseSedDebug reads sed --debug's program generously: every line that
// reads as a command counts, but for the lines known to be the text of
// a, i, c, e (up to the blank line that ends it) and the lines of an s
// replacement (up to the first line that ends with flags). Text can only
// add commands that are not there, never hide one.
func parseSedDebug(out string) (eval bool, writes, reads []string) {
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		m := sedDebugCmd.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if m[1] != "" { // an address is followed by a space
			if m[3] != " " || m[4] == "" {
				continue
			}
			m[3], m[4] = m[4][:1], m[4][1:]
		}
		c, rest := m[3], m[4]
		switch c {
		case "a", "i", "c", "e":
			// A text ends with a newline, and the command with another:
			// a blank line. Only a bare e (printed "e ") has none, and an
			// empty a, i, c text is the last command.
			if c == "e" {
				eval = true
			}
			if c != "e" || rest != " " {
				for i+1 < len(lines) && lines[i+1] != "" {
					i++
				}
			}
		case "w", "W":
			writes = append(writes, rest)
		case "r", "R":
			reads = append(reads, strings.TrimPrefix(rest, " "))
		case "s":
			re := sedDebugS.FindString(rest)
			if re == "" {
				continue
			}
			rest = rest[len(re):]
			for j := i; j < len(lines); j++ {
				if j > i {
					rest = lines[j]
				}
				e, w, ok := sedDebugFlags(rest)
				if ok {
					eval = eval || e
					writes = append(writes, w...)
					i = j
					break
				}
			}
		}
	}
	return eval, writes, reads
}

// sedDebugFlags reads the end of an s line: every '/' whose rest of the
// line reads as flags is a candidate; all of them count.
func sedDebugFlags(line string) (eval bool, writes []string, ok bool) {
	for k := 0; k < len(line); k++ {
		if line[k] != '/' {
			continue
		}
		if m := sedDebugFlag.FindStringSubmatch(line[k+1:]); m != nil {
			ok = true
			eval = eval || m[1] == "e"
			if strings.Contains(line[k+1:], "w") && m[2] != "" {
				writes = append(writes, m[2])
			}
		}
	}
	return eval, writes, ok
}

// checkSedReader compares the reader's reading of the pieces with GNU
// sed's. It reports whether the reader let the script through.
func checkSedReader(t *testing.T, sed string, opts, pieces []string) (allowed, gnuHarmless bool) {
	t.Helper()
	script := strings.Join(pieces, "\n")
	if !sedCheckSafe(script) {
		return false, false
	}
	writes, reads, bad := sedEffects(script)
	g := runGNUSed(t, sed, opts, pieces)
	gnuHarmless = g.sandboxOK
	if bad != "" {
		if gnuHarmless && testing.Verbose() {
			t.Logf("asks, GNU sed finds nothing: %q: %s", pieces, bad)
		}
		return false, gnuHarmless
	}
	fail := func(why string) {
		t.Errorf("sed reader lets %q through (writes %q, reads %q) but GNU sed %q %s\nsed --debug:\n%s\nsed --sandbox: %s",
			pieces, writes, reads, opts, why, g.debug, g.sandboxMsg)
	}
	if len(writes) == 0 && len(reads) == 0 && !g.sandboxOK && strings.Contains(g.sandboxMsg, "disabled in sandbox mode") {
		fail("refuses it with --sandbox (it has e, w or r)")
	}
	if g.eval {
		fail("runs a command (e or s///e)")
	}
	for _, list := range []struct {
		what      string
		gnu, mine []string
	}{{"writes", g.writes, writes}, {"creates", g.created, writes}, {"reads", g.reads, reads}} {
		for _, f := range list.gnu {
			if !sedListHas(list.mine, f) {
				fail(list.what + " " + strconv.Quote(f))
			}
		}
	}
	return true, gnuHarmless
}

func sedListHas(list []string, f string) bool {
	for _, x := range list {
		if x == f || filepath.Clean(x) == filepath.Clean(f) {
			return true
		}
	}
	return false
}

// sedOptions are the options the scripts run under: none changes how
// GNU sed reads a script but --posix, which only rejects more.
var sedOptions = [][]string{nil, {"--posix"}, {"-z", "-E"}, {"-E"}, {"-s"}}

// TestSedReaderAgainstGNU holds the reader to GNU sed on sedCorpus (under
// three of sedOptions) and on random scripts (a fixed seed;
// SIGNOFF_SED_RANDOM=N runs N of them, and SIGNOFF_SED_SEED another
// seed).
func TestSedReaderAgainstGNU(t *testing.T) {
	sed := sedNeeded(t)
	for _, opts := range sedOptions[:3] {
		for _, pieces := range sedCorpus {
			checkSedReader(t, sed, opts, pieces)
		}
	}
	n, seed := 400, int64(17)
	if v, err := strconv.Atoi(os.Getenv("SIGNOFF_SED_RANDOM")); err == nil {
		n = v
	}
	if v, err := strconv.ParseInt(os.Getenv("SIGNOFF_SED_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewSource(seed))
	var allowed, harmless, askedHarmless int
	for k := 0; k < n; k++ {
		gen := randomSedScript
		if k%2 == 1 {
			gen = grammarSedScript
		}
		a, h := checkSedReader(t, sed, sedOptions[rng.Intn(len(sedOptions))], gen(rng))
		if a {
			allowed++
		}
		if h {
			harmless++
			if !a {
				askedHarmless++
			}
		}
	}
	t.Logf("%d random scripts: %d let through; %d valid without e, w, r to GNU sed, of which %d asked", n, allowed, harmless, askedHarmless)
}

// sedFragments are what random scripts are made of: whole commands,
// pieces of commands, and the characters that readers get wrong.
var sedFragments = []string{
	"p", "d", "e", "e id", "s/a/b/", "s/a/b/e", "s/[/]/x/", "s|x|y|w o1", ":a", "ba", "b", "t", "Ta", "{", "}",
	"a foo", "a\\", "i\\\nx", "c\\", "w o2", "W o3", "r in", "R in2", "y/ab/cd/", "#c", "q5", "l 3", "=", "F",
	"z", "v", "N", "$!", "1", "/x/", "\\,x,", "0,/y/", "2~3", ",+2", ",~4", "!", "I", "M", ";", "\n", " ",
	"\\", "[", "]", "/", "^", "[:alpha:]", "[.", ".]", "[=", "=]", "|", ",", "s", "y", "g", "e", "w", "x",
	"&", "\\n", "é", "#", ":", "\t", "1a", "e\\", "$a\\", "s/", "p;", "}\n", "{p}", "s/[", "]/",
}

// randomSedScript joins 1 to 12 fragments, mostly whole commands with
// separators, and sometimes splits the result into -e pieces.
func randomSedScript(rng *rand.Rand) []string {
	var b strings.Builder
	for k := rng.Intn(12) + 1; k > 0; k-- {
		b.WriteString(sedFragments[rng.Intn(len(sedFragments))])
		if rng.Intn(3) == 0 {
			b.WriteString([]string{";", "\n", " "}[rng.Intn(3)])
		}
	}
	s := b.String()
	if rng.Intn(5) != 0 || !strings.Contains(s, "\n") {
		return []string{s}
	}
	return strings.Split(s, "\n")
}

// grammarSedScript writes 1 to 6 commands as sed's grammar has them, with
// tricky regular expressions, delimiters, flags and texts (braces
// balanced, label a defined), and then sometimes inserts or deletes a
// character.
func grammarSedScript(rng *rand.Rand) []string {
	pick := func(l ...string) string { return l[rng.Intn(len(l))] }
	re := func(d string) string {
		var b strings.Builder
		for k := rng.Intn(4); k > 0; k-- {
			b.WriteString(pick("a", ".*", "^", "[/]", "[^/]", "[]/]", "[[:alpha:]/]", "[[.-.]]", "[[=a=]]",
				"\\/", "\\n", "[\\]", "[|,]", "\\"+d, "[a"+d+"]", "é", "x", " ", ";", "\\(a\\)"))
		}
		return b.String()
	}
	addr := func() string {
		d := pick("/", ",", "|", "x", ";")
		a := pick("", "", "1", "$", "2~3", "/"+re("/")+"/"+pick("", "I", "M", " I"), "\\"+d+re(d)+d,
			"0,/"+re("/")+"/")
		if a != "" && rng.Intn(3) == 0 {
			a += pick(",3", ",+2", ",~4", ",/x/", ",$")
		}
		return a + pick("", "", "!", " ! ")
	}
	text := func() string {
		return pick(" foo", "\\\nfoo", "\\\nfoo\\\nbar", "\\foo", " a\\\ne id", "\\\n\\\\", "\\",
			" }", " x;e id", " w o4", "\\\ns\ne id")
	}
	depth := 0
	cmd := func() string {
		d := pick("/", "/", "|", ",", "#", ":", "x", " ", ";", "\\", "[")
		switch rng.Intn(12) {
		case 0, 1:
			return "s" + d + re(d) + d + pick("b", "&", "[", d+"e", "\\"+d, "\\\n", "]") + d +
				pick("", "g", "p", "e", "2g", "w o5", " e", "gI", "Me", "w o6;e", "}")
		case 2:
			return "y" + d + "ab" + d + "cd" + d
		case 3:
			return pick("a", "i", "c") + text()
		case 4:
			return pick(":", "b", "t", "T") + pick("a", " a", "", "a;e id", "a}", "a#x", "a e id")
		case 5:
			return pick("r", "R", "w", "W") + pick(" o1", "o2", " o3;e id")
		case 6:
			return pick("e", "e id", "e\\", "F", "z", "v", "v 4.2")
		case 7:
			depth++
			return "{"
		case 8:
			if depth > 0 {
				depth--
				return "}"
			}
		case 9:
			return pick("q", "Q", "l", "L") + pick("", "5", " 5", " 5;")
		}
		return pick("p", "d", "=", "N", "P", "h", "G", "x", "D", "n", "g", "H")
	}
	var b strings.Builder
	for k := rng.Intn(6) + 1; k > 0; k-- {
		c := cmd()
		if c != "}" {
			c = addr() + c
		}
		b.WriteString(c + pick(";", "\n", " ; ", "", "\n\n", " #c\n"))
	}
	b.WriteString(strings.Repeat("\n}", depth) + "\n:a")
	s := b.String()
	switch rng.Intn(6) {
	case 0:
		i := rng.Intn(len(s) + 1)
		s = s[:i] + pick("\\", "[", "]", "/", ";", "\n", "}", "e", "w", " ", ":", "=") + s[i:]
	case 1:
		i := rng.Intn(len(s))
		s = s[:i] + s[i+1:]
	}
	if rng.Intn(5) != 0 {
		return []string{s}
	}
	return strings.Split(s, "\n")
}

// FuzzSedReader is the same check on scripts the fuzzer makes (go test
// -fuzz FuzzSedReader ./pkg/policy/shell/): split, the script's lines are
// -e pieces.
func FuzzSedReader(f *testing.F) {
	for _, pieces := range sedCorpus[:16] {
		f.Add(strings.Join(pieces, "\n"), len(pieces) > 1)
	}
	f.Fuzz(func(t *testing.T, script string, split bool) {
		if strings.IndexByte(script, 0) >= 0 || len(script) > 200 {
			return
		}
		sed := sedNeeded(t)
		pieces := []string{script}
		if split {
			pieces = strings.Split(script, "\n")
		}
		checkSedReader(t, sed, nil, pieces)
	})
}

// TestSedEffects pins the reader's answers where GNU sed is not at hand:
// the files written and read, and whether it asks ("runs", "asks").
func TestSedEffects(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{":a;1e cat .env", "runs"},
		{":a;w out", "w:out"},
		{":a}w out", "asks"},
		{"b a;r in", "r:in"},
		{"1s/[/]*.*/cat .env/ep", "runs"},
		{"/[/i]/e cat .env", "runs"},
		{"s/[/]/x/w out", "w:out"},
		{"s/[[:alpha:]/]/x/w o", "w:o"},
		{"y/[/]/", ""},
		{"1a\\\ns\ne touch PWNED\n\n", "runs"},
		{"1a\\\nfoo\\\ne id", ""},
		{"1a\\\\\ne id", "runs"},
		{"1a foo\nw out", "w:out"},
		{"1a\\\nw out", ""},
		{"$a\\", ""},
		{"1a", "asks"},
		{"s/a/b/ e", "runs"},
		{"s/a/b/w out;p", "w:out;p"},
		{"s/a/b/k", "asks"},
		{"k", "asks"},
		{"1{p", "asks"},
		{"p}", "asks"},
		{"{p}", ""},
		{"0,/x/p;0~3p", ""},
		{"0p", "asks"},
		{"0r in", "r:in"},
		{"s|é|e|", "asks"},
		{"s/é/e/", ""},
		{"e", "runs"},
		{"e id\nw out", "runs w:out"},
		{"R in2\nW out2", "w:out2 r:in2"},
		{":a;N;$!ba;s/\\n/ /g", ""},
	} {
		writes, reads, bad := sedEffects(c.script)
		var got []string
		switch {
		case strings.Contains(bad, "runs"):
			got = append(got, "runs")
		case bad != "":
			got = append(got, "asks")
		}
		for _, f := range writes {
			got = append(got, "w:"+f)
		}
		for _, f := range reads {
			got = append(got, "r:"+f)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("sedEffects(%q) = %q (%s), want %q", c.script, g, bad, c.want)
		}
	}
}
