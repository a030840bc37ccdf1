package globs

import (
	"testing"
)

func TestGlobIntersectionDecidesWhetherTwoPatternsShareAString(t *testing.T) {
	for _, tt := range []struct {
		name, a, b string
		want       bool
	}{
		{"a literal meets itself", "rm -rf x", "rm -rf x", true},
		{"a star meets anything", "rm *", "rm -rf x", true},
		{"two stars meet", "r*", "*m", true},
		{"a question mark meets one character", "r?", "rm", true},
		{"a class meets a member", "r[a-m]", "rm", true},
		{"a class misses a non-member", "r[a-l]", "rm", false},
		{"a negated class misses a member", "r[!m]", "rm", false},
		{"different literals do not meet", "ls *", "rm *", false},
		{"a prefix and a suffix that conflict", "a*b", "c*", false},
		{"stars on both sides with a common middle", "*x*", "*y*x", true},
		{"lengths that cannot agree", "??", "???", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Intersects(FromShellPattern(tt.a), FromShellPattern(tt.b)); got != tt.want {
				t.Errorf("gIntersects(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestGlobCoverIsSound(t *testing.T) {
	for _, tt := range []struct {
		name, pattern, word string
		want                bool
	}{
		{"a trailing star covers an unknown tail", "cat *", "cat *", true},
		{"a literal cannot cover an unknown", "cat .env", "cat *", false},
		{"a question mark covers one unknown character", "r?", "r?", true},
		{"a question mark cannot cover an unknown run", "r?", "r*", false},
		{"a literal prefix then star covers", "git log *", "git log --x *", true},
		{"a class cannot cover an unknown character", "r[m]", "r?", false},
		{"a pattern covers a literal it matches", "ls *", "ls -la", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Covers(FromShellPattern(tt.pattern), FromShellPattern(tt.word)); got != tt.want {
				t.Errorf("gCovers(%q, %q) = %v, want %v", tt.pattern, tt.word, got, tt.want)
			}
		})
	}
}

func TestPathAlternativesUnfoldBracesAndGlobstars(t *testing.T) {
	for _, tt := range []struct {
		name, pattern, path string
		want                bool
	}{
		{"globstar matches zero segments", "**/.env", ".env", true},
		{"globstar matches several segments", "**/.env", "a/b/.env", true},
		{"globstar does not match a suffix of a name", "**/.env", "prod.env", false},
		{"a base-name pattern matches under any directory", "*.env*", "app/.env.local", true},
		{"a star does not cross a slash", "/etc/*", "/etc/ssh/x", false},
		{"braces are alternatives", "/etc/{hosts,passwd}", "/etc/passwd", true},
		{"a home pattern", "/home/dev/.ssh/**", "/home/dev/.ssh/id_rsa", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alts, ok := PathAlternatives(tt.pattern)
			if !ok {
				t.Fatal("too many alternatives")
			}
			got := false
			for _, a := range alts {
				got = got || Intersects(a, Literal(nil, tt.path))
			}
			if got != tt.want {
				t.Errorf("%q matches %q: %v, want %v", tt.pattern, tt.path, got, tt.want)
			}
		})
	}
}

func TestIntersectionIsBounded(t *testing.T) {
	long := make(Glob, 0, 100000)
	for i := 0; i < 100000; i++ {
		long = append(long, Tok{R: 'a'})
	}
	if !Intersects(long, FromShellPattern("b*")) {
		t.Error("past the bound the answer must be the strict one (could match)")
	}
	if Covers(FromShellPattern("*a*"), long) {
		t.Error("past the bound cover must answer no")
	}
}

// A path word whose last part its pattern's wildcards alone fill reads
// every file of the directories it spells: it meets an absolute rule's
// name there (cat ~/.docker/* reads ~/.docker/config.json).
func TestAnchoredIntersectionOfAWholeDirectory(t *testing.T) {
	for _, tt := range []struct {
		name, word, rule string
		want             bool
	}{
		{"a star filling an absolute rule's name in its own directory", "/h/.docker/*", "/h/.docker/config.json", true},
		{"so do question marks and stars", "/h/.docker/?*", "/h/.docker/config.json", true},
		{"and a starred directory that reaches it", "/h/.d*/*", "/h/.docker/config.json", true},
		{"a name the word spells still must meet", "/h/.docker/*.txt", "/h/.docker/config.json", false},
		{"a directory short of the rule's does not meet", "/h/*", "/h/.docker/config.json", false},
		{"a relative word floats", "x/*", "/h/x/config.json", false},
		{"a name after ** still needs spelling", "/h/.ssh/*", "/h/**/id_rsa", false},
		{"a relative rule floats", "/h/src/*", "*.env*", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, p := FromPathText(tt.word), FromPathText(tt.rule)
			if got := IntersectsAnchored(w, p); got != tt.want {
				t.Errorf("IntersectsAnchored(%q, %q) = %v, want %v", tt.word, tt.rule, got, tt.want)
			}
		})
	}
}

func TestAnchoredIntersectionNeedsTheWordToSpellPartOfEveryName(t *testing.T) {
	for _, tt := range []struct {
		name, word, rule string
		want             bool
	}{
		{"a literal path meets its rule", "/h/.ssh/id_rsa", "**/.ssh/**", true},
		{"a prefix of the name anchors it", ".e*", "*.env*", true},
		{"a question mark inside the name is anchored by the rest", ".en?", "*.env*", true},
		{"a class anchors the name", ".[e]nv", "*.env*", true},
		{"a star in the directory name is anchored by its dot", "/h/.s*/id_rsa", "**/.ssh/**", true},
		{"an expansion followed by the literal name", "*/.env", "**/.env", true},
		{"the name wholly from a star does not count", "*.go", "*.env*", false},
		{"a bare expansion does not count", "*", "**/.ssh/**", false},
		{"a directory wholly from a star does not count", "/h/*/id_rsa", "**/.ssh/**", false},
		{"a rule of stars alone is met by anything", "*.go", "**", true},
		{"words that cannot meet at all", "/h/.s*", "/etc/**", false},
		{"every name of the rule must be anchored", "/h/.ssh/*", "**/.ssh/id_rsa", false},
		{"a separator after the name is not the name", "*.go", "*.env.*", false},
		{"a separator after the name: a suffix rule", "*.txt", "*secret-*", false},
		{"the name before the separator still anchors", ".env.*", "*.env.*", true},
		{"a dot glob still meets a dotted name", ".*", "*.env.*", true},
		{"a literal denied name still meets", "x.env.go", "*.env.*", true},
		{"a prefix of the name before the separator anchors", "*.en*", "*.env.*", true},
		{"a run of separators alone stays a name to anchor", "x*", "*.*", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, p := FromShellPattern(tt.word), FromShellPattern(tt.rule)
			if got := IntersectsAnchored(w, p); got != tt.want {
				t.Errorf("gIntersectsAnchored(%q, %q) = %v, want %v", tt.word, tt.rule, got, tt.want)
			}
			if tt.want && !Intersects(w, p) {
				t.Errorf("anchored meeting without a meeting: %q, %q", tt.word, tt.rule)
			}
		})
	}
}

func TestBracketExpressionsAreReadAsShellsReadThem(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"[[:alpha:]]", "e", true},
		{"[[:alpha:]]", "[", false},
		{"[[:alpha:]]", "é", true}, // the locale may call it a letter
		{".[[:alpha:]]nv", ".env", true},
		{".[[:alpha:]]nv", ".a]nv", false},
		{".[![:digit:]]nv", ".env", true},
		{".[![:digit:]]nv", ".1nv", false},
		{"[![:alpha:]]", "é", true}, // nor may it
		{".[[.e.]]nv", ".env", true},
		{"[[.-.]]", "-", true},
		{"[[.a.]-c]", "b", true},
		{"[[:upper:][:digit:]]", "7", true},
		{"[[:punct:]]", ".", true},
		{"[[:space:]]", "\t", true},
		{"[[:xdigit:]]", "g", false},
		{"[[:word:]]", "_", true},
		{"[]a]", "]", true},
		{"[!]a]", "]", false},
		{"[^a]", "b", true},
		{"[a-]", "-", true},
		{`[\]]`, "]", true},
		{"[--0]", "/", true},
		{"[d-f]", "e", true},
		// Not read exactly: any character.
		{".[[=e=]]nv", ".env", true},
		{"[[=e=]]", "x", true},
		{"[[:foo:]]", "x", true},
		{"[[.ch.]]", "x", true},
		{"[a-[:digit:]]", "x", true},
	} {
		got := Intersects(AppendUnquoted(nil, tt.pattern), Literal(nil, tt.name))
		if got != tt.want {
			t.Errorf("the glob of %q matches %q: %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
		if got := Match(tt.pattern, tt.name); got != tt.want && Check(tt.pattern) == nil {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestCheckRejectsBracketsShellsReadDifferently(t *testing.T) {
	for _, p := range []string{"cat .[[=e=]]nv", "[[:foo:]]", "[[:alpha]x]", "[[.ch.]]", "[a-[:digit:]]", "[[:alpha:]-z]", "[[.].]]"} {
		if Check(p) == nil {
			t.Errorf("Check(%q) accepts a bracket expression shells read differently", p)
		}
	}
	for _, p := range []string{"ls [[:upper:]]*", "cat .[[.e.]]nv", "[]a]", "[!a-z]", "[a-]", `[\]]`} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%q) = %v", p, err)
		}
	}
	if CheckPathBrackets("**/.[[:alpha:]]nv") == nil || CheckPathBrackets("**/.[e]nv") != nil || CheckPathBrackets("a/[.]b") != nil {
		t.Error("CheckPathBrackets must refuse POSIX classes in path globs, and only them")
	}
}

func TestWordBracketsSpanQuotedPartsAndExpansions(t *testing.T) {
	lit := func(s string) WordPart { return WordPart{Text: s} }
	q := func(s string) WordPart { return WordPart{Text: s, Quoted: true} }
	x := WordPart{Unknown: true, Tok: AnyRun}
	for _, tt := range []struct {
		name  string
		parts []WordPart
		env   bool // could be .env
	}{
		{`.["e"]nv`, []WordPart{lit(".["), q("e"), lit("]nv")}, true},
		{`.[x"]"e]nv`, []WordPart{lit(".[x"), q("]"), lit("e]nv")}, true},
		{`".["e]nv`, []WordPart{q(".["), lit("e]nv")}, false},
		{`.[$x]nv`, []WordPart{lit(".["), x, lit("]nv")}, true},
		{`.["$x"]nv`, []WordPart{lit(".["), {Unknown: true, Quoted: true, Tok: AnyRun}, lit("]nv")}, true},
		{`$x]nv (x=.[e)`, []WordPart{x, lit("]nv")}, true},
		{`$x-z]nv`, []WordPart{x, lit("a-z]nv")}, true},
		{`$x/]nv`, []WordPart{x, lit("/]nv")}, false},
	} {
		g := AppendWord(nil, tt.parts)
		if got := Intersects(g, Literal(nil, ".env")); got != tt.env {
			t.Errorf("%s: glob %s could be .env: %v, want %v", tt.name, g, got, tt.env)
		}
	}
}

func TestFilterPatternsHoldTheGlobsetReadingToo(t *testing.T) {
	g := FromFilterPattern(".[[:alpha:]]nv")
	for _, n := range []string{".env", ".a]nv"} {
		if !Intersects(g, Literal(nil, n)) {
			t.Errorf("the filter glob %s misses %q", g, n)
		}
	}
	if Intersects(FromFilterPattern("*.[ch]"), Literal(nil, "x.go")) {
		t.Error("a plain filter bracket must stay exact")
	}
}

func TestLowerFoldsClasses(t *testing.T) {
	w := AppendUnquoted(nil, ".[E]NV")
	if !HasUpper(w) || !Intersects(Lower(w), Literal(nil, ".env")) {
		t.Errorf("folded, .[E]NV must meet .env (a case-insensitive file system opens it)")
	}
	if !HasUpper(AppendUnquoted(nil, ".[E][N][V]")) {
		t.Error("a class may hold upper-case letters")
	}
}
