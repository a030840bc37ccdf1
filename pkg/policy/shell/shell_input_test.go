package shell

import (
	"runtime"
	"strings"
	"testing"
)

func TestShScreenInputRefusesWhatBashMayReadDifferently(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"a backslash before CR LF is a line break to bash", "echo ok \\\r\nrm -rf ~", "CR"},
		{"a lone CR", "ls\r", "CR"},
		{"NUL ends the string in bash", "echo a\x00b", "NUL"},
		{"ESC", "echo \x1b[2J", "ESC"},
		{"DEL", "echo \x7f", "DEL"},
		{"vertical tab", "echo a\vb", "U+000b"},
		{"next line", "echo a\u0085b", "U+0085"},
		{"line separator", "echo a\u2028ls", "U+2028"},
		{"paragraph separator", "echo a\u2029ls", "U+2029"},
		{"a byte order mark", "\ufeffls", "U+FEFF"},
		{"invalid UTF-8", "echo \xff", "not valid UTF-8"},
		{"a truncated UTF-8 sequence", "echo \xe2\x80", "not valid UTF-8"},
		{"the replacement character JSON makes of invalid bytes", "echo \ufffd", "U+FFFD"},
		{"tab and LF are fine", "echo\ta\nls", ""},
		{"other Unicode is fine", "echo naïve 日本語 ✓", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := shScreenInput(tt.src)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("shScreenInput(%q) = %q, want one containing %q", tt.src, got, tt.want)
			}
			if a := Analyze(tt.src); (a.Unanalysable != "") != (tt.want != "") {
				t.Errorf("AnalyzeShell(%q).Unanalysable = %q", tt.src, a.Unanalysable)
			}
		})
	}
}

// TestAnalyzeShellBoundsHostileShapes checks that every adversarial shape
// of 64 KiB ends in a question with work linear in its size. Work is
// counted, not timed (the timing is BenchmarkAnalyzeShellWorstCase's): the
// bytes and objects Analyze allocates, which a loaded machine does not
// change. The worst shape allocates about 140 bytes per input byte and
// 90k objects; a blow-up that is not linear — a quadratic one is 64 KiB ×
// 64 KiB — passes the bounds by orders of magnitude.
func TestAnalyzeShellBoundsHostileShapes(t *testing.T) {
	const perByte, maxObjects = 1000, 1 << 20
	for _, s := range shHostileShapes() {
		t.Run(s.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			a := Analyze(s.src)
			runtime.ReadMemStats(&after)
			if b, n := after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs; b > perByte*uint64(len(s.src)) || n > maxObjects {
				t.Errorf("%s (%d bytes): %d bytes in %d objects allocated, bound %d bytes (%d per input byte) and %d objects",
					s.name, len(s.src), b, n, perByte*len(s.src), perByte, maxObjects)
			}
			if s.unanalysable && a.Unanalysable == "" {
				unan := false
				for _, c := range a.Commands {
					unan = unan || c.Unanalysable != ""
				}
				if !unan {
					t.Errorf("%s: analysable, want it refused", s.name)
				}
			}
		})
	}
}

// shHostileShapes are the worst shapes known for the analysis, each about
// the broker's 64 KiB limit. unanalysable: the shape must be refused.
func shHostileShapes() []struct {
	name, src    string
	unanalysable bool
} {
	const n = 64 << 10
	rep := func(unit string, tail ...string) string {
		s := strings.Repeat(unit, (n-len(strings.Join(tail, "")))/len(unit))
		return s + strings.Join(tail, "")
	}
	return []struct {
		name, src    string
		unanalysable bool
	}{
		{"env chain", rep("env ", "ls"), true},
		{"xargs chain", rep("xargs ", "ls"), true},
		{"sudo chain", rep("sudo ", "ls"), true},
		{"timeout chain", rep("timeout 1 ", "ls"), true},
		{"nested substitutions", strings.Repeat("$(", n/4) + "ls" + strings.Repeat(")", n/4), true},
		{"unclosed substitutions", rep("$("), true},
		{"nested subshells", strings.Repeat("(", n/2-2) + "ls" + strings.Repeat(")", n/2-2), true},
		{"nested ifs", strings.Repeat("if a; then ", n/16) + "ls" + strings.Repeat("; fi", n/16), true},
		{"a long pipeline", rep("ls|", "ls"), true},
		{"a long && chain", rep("ls&&", "ls"), true},
		{"a long arithmetic sum", "echo $((" + rep("1+", "1))"), true},
		{"many functions that fork", rep("f(){ f|f& };"), true},
		{"many commands", rep("ls;"), true},
		{"many words", "echo " + rep("a "), false},
		{"many expansions", "cat " + rep("$a"), false},
		{"a huge glob redirect", "echo > " + rep("*"), true},
		{"a brace bomb", "echo " + rep("{a,b}"), true},
		{"one long -c script", "sh -c '" + rep("x ", "'"), false},
		{"nested -c scripts", rep("sh -c "), true},
		{"many here-documents", rep("cat <<E\nx\nE\n"), true},
		{"many cds and redirects", rep("cd a; echo > x; "), true},
		{"many cds in subshells of one loop", "for i in 1; do " + rep("(cd a); echo x; ", "done"), true},
		{"quotes", rep(`"a" `), false},
		{"backslashes", rep(`\`), false},
	}
}
