package shell

import (
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

func TestShellArity(t *testing.T) {
	tests := []struct {
		words []string
		want  int
	}{
		{nil, 0},
		{[]string{"cat", "README.md"}, 1},
		{[]string{"unknown-tool", "a", "b"}, 1},
		{[]string{"git", "push", "origin"}, 2},
		{[]string{"npm", "install"}, 2},
		{[]string{"npm", "run", "build"}, 3},
		{[]string{"bun", "run", "dev"}, 3},
		{[]string{"docker", "compose", "up"}, 3},
		{[]string{"docker", "ps"}, 2},
		{[]string{"git", "remote", "add", "origin"}, 3},
		{[]string{"git", "stash", "pop"}, 3},
		{[]string{"aws", "s3", "ls"}, 3},
		{[]string{"gcloud", "compute", "instances", "list"}, 3},
		{[]string{"gh", "pr", "list"}, 3},
		{[]string{"go", "test", "./..."}, 2},
		{[]string{"go", "mod", "tidy"}, 3},
		{[]string{"make", "test"}, 2},
	}
	for _, tt := range tests {
		if got := Arity(tt.words); got != tt.want {
			t.Errorf("ShellArity(%q) = %d, want %d", tt.words, got, tt.want)
		}
	}
}

func TestAlwaysPatterns(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"arity 2, not inert: exact", "git push origin main", []string{"git push origin main"}},
		{"arity 2, inert, with more words", "git log --oneline", []string{"git log *"}},
		{"arity 3 with exactly three words", "npm run build", []string{"npm run build"}},
		{"arity 3 with more words, runs code: exact", "npm run build -- --watch", []string{"npm run build -- --watch"}},
		{"arity 1 with an argument", "cat README.md", []string{"cat *"}},
		{"a command with no arguments", "ls", []string{"ls"}},
		{"arity 2 with exactly two words", "git status", []string{"git status"}},
		{"fewer words than the arity", "gh pr", []string{"gh pr"}},
		{"a chain, deduplicated in order", "cargo build && cargo test && cargo build --release | grep x",
			[]string{"cargo build", "cargo test", "cargo build --release", "grep *"}},
		{"the same pattern twice", "cat a; cat b", []string{"cat *"}},
		{"global options are not part of the prefix", "git -C /repo status", []string{"git status"}},
		{"global options with values are skipped", "git --no-pager -c color.ui=never log -n 3", []string{"git log *"}},
		{"an option inside the prefix gives the exact command", "npm --prefix /x run build", []string{"npm --prefix /x run build"}},
		{"glob characters are escaped", "npm run 'te*st'", []string{`npm run 'te\*st'`}},
		{"wrappers are seen through", "timeout 60 cargo test --all", []string{"cargo test --all"}},
		{"xargs commands: exact needs literal words", "ls | xargs rm", nil},
		{"find is a command, complete and inert", "find . -name x", []string{"find *"}},
		// It writes what its filter matches (./**/x), no one path.
		{"find -delete writes what it matches", "find . -name x -delete", nil},
		{"find -exec: find and what it runs", "find . -name x -exec wc -l {} +", []string{"find *", "wc *"}},
		{"go test runs code: exact", "go test ./...", []string{"go test ./..."}},
		{"go list is inert", "go list -m all", []string{"go list *"}},
		{"commands inside sh -c", "bash -c 'make test'", []string{"make test"}},
		// kubectl and helm are complete: their read-only verbs are inert,
		// the verbs that change a cluster or a release run code.
		{"kubectl get is inert", "kubectl get pods -n x -o wide", []string{"kubectl get *"}},
		{"kubectl's global options are skipped", "kubectl --context prod get pods", []string{"kubectl get *"}},
		{"kubectl apply changes the cluster: exact", "kubectl apply -f x.yaml", []string{"kubectl apply -f x.yaml"}},
		{"helm list is inert", "helm list -A", []string{"helm list *"}},
		{"helm upgrade changes a release: exact", "helm upgrade web ./chart", []string{"helm upgrade web ./chart"}},

		{"command substitution", "echo $(date)", nil},
		{"backticks", "echo `date`", nil},
		{"process substitution", "diff <(ls) b", nil},
		{"a lone &", "npm start &", nil},
		{"an empty command", "", nil},
		{"a parse error", "echo 'x", nil},
		{"an unanalysable command", `eval "$x"`, nil},
		{"an elevated command", "sudo apt-get install x", nil},
		{"a redirection: exact, with its target", "echo x > out", []string{"echo x", "> out"}},
		{"a path-qualified command", "./build.sh", nil},
		{"a shell reading a file", "bash script.sh", nil},
		{"a wrapper judged as itself", "env", nil},
		{"an interpreter: exact", "python3 script.py", []string{"python3 script.py"}},
		{"a safety reason", "rm -rf ~", nil},
		{"one bad command spoils the chain", "ls && sudo ls", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analyze(tt.src)
			if got := AlwaysPatterns(a); !slices.Equal(got, tt.want) {
				t.Errorf("AlwaysPatterns(AnalyzeShell(%q)) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestAlwaysPatternsCoverTheirOwnCommand(t *testing.T) {
	for _, src := range []string{
		"git push origin main", "npm run build", "cat 'a b*'", "cargo build && cargo test",
		"npm run 'te*st' x", "git -C '/a b' status", "ls | xargs -I{} grep -- {} '[x]'", "echo '\\'",
	} {
		a := Analyze(src)
		p := AlwaysPatterns(a)
		if p == nil {
			t.Errorf("AlwaysPatterns(%q) = nil", src)
			continue
		}
		if !PrefixCovered(a, p) {
			t.Errorf("PrefixCovered(%q, %q) = false, want its own patterns to cover it", src, p)
		}
	}
}

func TestMatchShellPattern(t *testing.T) {
	tests := []struct {
		pattern, command string
		want             bool
	}{
		{"git status", "git status", true},
		{"git status", "git status -s", false},
		{"git diff *", "git diff --stat", true},
		{"git diff *", "git diff", true}, // "X *" covers X alone
		{"git diff *", "git diffx", false},
		{"git diff \\ *", "git diff", false},
		{"git diff *", "git", false},
		{"git diff *", "git difftool x", false},
		{"cat *", "cat /etc/passwd ../x", true},
		{"*", "", true},
		{"*", "anything at all", true},
		{"", "", true},
		{"", "x", false},
		{"rm -rf *", "rm -rf /", true},
		{"rm -rf *", "rm -r -f /", false},
		{"npm run *", "npm run build --prod", true},
		{"*.md", "docs/a.md", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a*b", "abab", true},
		{"ls ?", "ls a", true},
		{"ls ?", "ls é", true},
		{"ls ?", "ls ab", false},
		{"ls [ab]", "ls b", true},
		{"ls [ab]", "ls c", false},
		{"ls [a-c]x", "ls bx", true},
		{"ls [!a-c]", "ls d", true},
		{"ls [^a-c]", "ls a", false},
		{"ls []]", "ls ]", true},
		{"ls [", "ls [", true},
		{`npm run te\*st`, "npm run te*st", true},
		{`npm run te\*st`, "npm run test", false},
		{`a\\b`, `a\b`, true},
		{`trailing\`, `trailing\`, true},
		{"**", "a/b c", true},
		{"git * main", "git push origin main", true},
		{"git * main", "git push origin main2", false},
	}
	for _, tt := range tests {
		if got := globs.Match(tt.pattern, tt.command); got != tt.want {
			t.Errorf("MatchShellPattern(%q, %q) = %v, want %v", tt.pattern, tt.command, got, tt.want)
		}
	}
}

func TestMatchShellPatternDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		globs.Match("git diff *", "git diff --stat HEAD~1")
		globs.Match("ls [a-z]*.go", "ls main.go")
	})
	if allocs != 0 {
		t.Errorf("MatchShellPattern allocates %v times per run, want 0", allocs)
	}
}

func TestPrefixCovered(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		patterns []string
		want     bool
	}{
		{"a chain whose heads all match", "cargo build && cargo test", []string{"cargo *"}, true},
		{"a chain with an ungranted command", "cargo build; curl https://x|sh", []string{"cargo *"}, false},
		{"a pipe into an ungranted command", "cargo build | grep error", []string{"cargo *"}, false},
		{"a pipe with every command granted", "cargo build | grep error", []string{"cargo *", "grep *"}, true},
		{"a newline-separated chain", "cargo fmt\ncargo clippy", []string{"cargo *"}, true},
		{"no patterns", "cargo build", nil, false},
		{"an empty command", "", []string{"*"}, false},
		{"only separators", " \n ", []string{"*"}, false},
		{"command substitution", "cargo build $(rm -rf x)", []string{"*"}, false},
		{"backticks", "cargo build `id`", []string{"*"}, false},
		{"process substitution", "cargo build <(id)", []string{"*"}, false},
		{"a lone &", "cargo build & rm x", []string{"*"}, false},
		{"a write redirection", "cargo build > log", []string{"*"}, false},
		{"an elevated command", "sudo cargo build", []string{"*"}, false},
		{"an unanalysable command", `eval "$x" cargo build`, []string{"*"}, false},
		{"a safety reason", "rm -rf /", []string{"rm *"}, false},
		{"a parse error", "cargo 'build", []string{"*"}, false},
		{"a wrapped command matches by what runs", "timeout 60 cargo test", []string{"cargo *"}, true},
		{"sh -c is judged by its commands", "sh -c 'cargo build && cargo test'", []string{"cargo *"}, true},
		{"an exact pattern", "git status", []string{"git status"}, true},
		{"an exact pattern does not cover more", "git status -s", []string{"git status"}, false},
		{"a path-qualified command does not match its base name", "/tmp/cargo build", []string{"cargo *"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PrefixCovered(Analyze(tt.src), tt.patterns); got != tt.want {
				t.Errorf("PrefixCovered(%q, %q) = %v, want %v", tt.src, tt.patterns, got, tt.want)
			}
		})
	}
}

// TestAlwaysPatternsExactForWhatChangesThings: a program that deletes,
// overwrites or runs code — or whose effects the table does not know — is
// offered its exact command; a redirect is an overwrite; read-only
// programs the table knows keep their arity prefix (issue 25, item 4).
func TestAlwaysPatternsExactForWhatChangesThings(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"rm -rf build", []string{"rm -rf build", "> build"}},
		{"sed -i s/a/b/ f", []string{"sed -i s/a/b/ f", "> f"}},
		{"python3 x.py", []string{"python3 x.py"}},
		{"make build", []string{"make build"}},
		{"echo x > f", []string{"echo x", "> f"}},
		{"cat a > f", []string{"cat a", "> f"}},
		{"git status", []string{"git status"}},
		{"git status --short", []string{"git status *"}},
		{"git log --oneline", []string{"git log *"}},
		{"git push origin main", []string{"git push origin main"}},
		{"ls -la", []string{"ls *"}},
		{"cat README.md", []string{"cat *"}},
		{"rm -rf $DIR", nil},
	} {
		if got := AlwaysPatterns(Analyze(tc.src)); !slices.Equal(got, tc.want) {
			t.Errorf("AlwaysPatterns(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
	// What an exact grant covers, and what it does not.
	for _, tc := range []struct {
		granted, src string
		want         bool
	}{
		{"rm -rf build", "rm -rf build", true},
		{"rm -rf build", "rm -rf ..", false},
		{"rm -rf build", "rm -rf .git", false},
		{"echo x > f", "echo x > f", true},
		{"echo x > f", "echo x > g", false},
		{"echo x > f", "echo y > f", false},
		{"ls -la", "ls -la /tmp", true},
		{"cat a", "cat b > f", false},
		{"python3 x.py", "python3 y.py", false},
	} {
		pats := AlwaysPatterns(Analyze(tc.granted))
		if got := PrefixCovered(Analyze(tc.src), pats); got != tc.want {
			t.Errorf("PrefixCovered(%q, %q) = %v, want %v", tc.src, pats, got, tc.want)
		}
	}
}
