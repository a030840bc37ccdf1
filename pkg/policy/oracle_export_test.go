package policy

import (
	"path"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// What the differential oracle (oracle_test.go) asks of an analysis: did
// it judge the program bash executed, and the file a redirection opened?

// OracleJudgesExec reports whether the analysis judged a program bash
// executed: exe is the path of the program that ran, argv its arguments
// (argv[0] as bash passed it). A command matches when its name is the
// program's and its description (words, or glob when a word is not
// literal) covers the arguments; a wrapper seen through (sudo, env, xargs,
// find -exec…) matches by name, its own options being its handler's
// business.
func OracleJudgesExec(a shell.Analysis, exe string, argv []string) bool {
	rest := ""
	if len(argv) > 1 {
		rest = " " + strings.Join(argv[1:], " ")
	}
	// The program as bash named it (argv[0]: "python3", "/bin/rm") and as
	// the kernel resolved it (python3.11): a symlink changes the latter.
	names := []string{path.Base(exe)}
	typed := path.Base(exe)
	if len(argv) > 0 && argv[0] != "" {
		typed = argv[0]
		names = append(names, path.Base(argv[0]))
	}
	for _, c := range a.Commands {
		if c.Redirect {
			continue
		}
		for _, w := range c.Wrappers {
			head, _, _ := strings.Cut(w, " ")
			for _, n := range names {
				if path.Base(head) == n {
					return true
				}
			}
		}
		if c.Globs != nil {
			for k, g := range c.Globs {
				for _, s := range []string{typed + rest, names[0] + rest} {
					if globs.Intersects(g, globs.Literal(nil, s)) {
						return true
					}
				}
				for _, n := range names {
					if k < len(c.BaseGlobs) && globs.Intersects(c.BaseGlobs[k], globs.Literal(nil, n+rest)) {
						return true
					}
				}
			}
			continue
		}
		if len(c.Words) == 0 {
			continue
		}
		cr := ""
		if len(c.Words) > 1 {
			cr = " " + strings.Join(c.Words[1:], " ")
		}
		for _, n := range names {
			if c.Name == n && cr == rest {
				return true
			}
		}
	}
	return false
}

// OracleJudgesFile reports whether the analysis judged a redirection (a
// write or a read) of the file p (absolute, as the sandbox names it), run
// in cwd with the given home.
func OracleJudgesFile(a shell.Analysis, p, cwd, home string) bool {
	lit := globs.Literal(nil, p)
	for _, c := range a.Commands {
		if !c.Redirect {
			continue
		}
		if c.Globs == nil {
			t, _, _ := cleanPath(c.Target, home)
			if !path.IsAbs(t) {
				t = path.Join(cwd, t)
			}
			if t == p {
				return true
			}
			continue
		}
		for _, g := range c.Globs {
			g = globs.CleanPath(g, home)
			if len(g) > 0 && g[0].Lit() && g[0].R != '/' {
				// Relative: joined to the working directory, then cleaned
				// again (../../x after cd .. climbs out of it).
				g = globs.CleanPath(append(globs.Literal(nil, cwd+"/"), g...), home)
			}
			if globs.Intersects(g, lit) {
				return true
			}
		}
	}
	return false
}

// OracleUnanalysable returns why the analysis, or one of its commands,
// cannot be judged from its text ("" when everything was judged).
func OracleUnanalysable(a shell.Analysis) string {
	if a.Unanalysable != "" {
		return a.Unanalysable
	}
	for _, c := range a.Commands {
		if c.Unanalysable != "" {
			return c.Unanalysable
		}
	}
	return ""
}

// AnalyzeWithTable analyses src with p's program table (its programs:
// section over the built-in one), as p's Evaluate does.
func AnalyzeWithTable(p *Policy, src string) shell.Analysis {
	return shell.AnalyzeWith(src, p.progs)
}
