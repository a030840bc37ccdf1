package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// The oracle with real programs (issue 24, item 9, for the complete
// tables of find, rg, fd, go and node): the command runs in bash with the
// system's real programs, in a bubblewrap sandbox with no network, in a
// workspace and a home seeded with a decoy secret, under strace -f (opens,
// writes, execs). A call the engine allows whose trace reads a file a deny
// rule covers, writes a path a deny rule covers, or executes a program the
// analysis did not judge is a failure. Each case also says whether its
// trace must show such a violation: a case the engine must not allow is
// run too, to show the oracle would catch the engine if it did.

// realPolicy allows every command by rule, so that only the analysis can
// keep a command from running: the decoy secrets (~/.ssh, .env) are
// denied to the read tools, /etc and ~/.ssh to the write tools.
const realPolicy = `
mode: auto-edit
home: /home/dev
workspace: [/work/proj]
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "read_file(/home/dev/.ssh/**)", action: deny }
  - { rule: "read_file(**/.env)", action: deny }
  - { rule: "write_file(/etc/**)", action: deny }
  - { rule: "write_file(/home/dev/.ssh/**)", action: deny }
`

// realPrograms are the programs the cases run (scripts/test-deps.sh
// installs them).
var realPrograms = []string{"bwrap", "strace", "bash", "find", "rg", "fdfind", "node", "go", "cat", "wc"}

// realSetup checks that the programs are installed; without one the test
// skips, or fails when CI=true.
func realSetup(t *testing.T) {
	t.Helper()
	needPrograms(t, realPrograms...)
}

// needPrograms fails (in CI) or skips the test when a program its premise
// runs is not installed.
func needPrograms(t *testing.T, progs ...string) {
	t.Helper()
	for _, prog := range progs {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed: %v (scripts/test-deps.sh installs it)", prog, err)
			}
			t.Skipf("%s is not installed: %v", prog, err)
		}
	}
}

// realSeed is the scratch: a Go module with a node script, a file of
// shell text, the decoy secret.
var realSeed = map[string]string{
	"proj/go.mod": "module example.com/x\n\ngo 1.21\n", "proj/main.go": "package main\n\nfunc main() {}\n",
	"proj/src/a.go": "package src\n", "proj/app.js": "console.log('hi')\n", "proj/README.md": "# x\n",
	"proj/notes.txt": "cat /home/dev/.ssh/id_rsa\n", "home/.ssh/id_rsa": "DECOY PRIVATE KEY\n", "trace/.keep": "",
	"proj/.env": "DECOY=1\n",
}

// realRun runs src in a fresh scratch under strace and returns the trace.
func realRun(t *testing.T, src string) string {
	t.Helper()
	scratch := t.TempDir()
	for name, body := range realSeed {
		p := filepath.Join(scratch, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"}
	for _, l := range []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"} {
		if target, err := os.Readlink(l); err == nil {
			args = append(args, "--symlink", target, l)
		} else if fi, err := os.Stat(l); err == nil && fi.IsDir() {
			args = append(args, "--ro-bind", l, l)
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev",
		"--tmpfs", "/work", "--bind", filepath.Join(scratch, "proj"), oracleCwd,
		"--tmpfs", "/home", "--bind", filepath.Join(scratch, "home"), oracleHome,
		"--tmpfs", "/tmp", "--bind", filepath.Join(scratch, "trace"), "/trace",
		"--remount-ro", "/", "--chdir", oracleCwd,
		"--clearenv", "--setenv", "HOME", oracleHome, "--setenv", "LANG", "C.UTF-8",
		"--setenv", "GOTOOLCHAIN", "local", "--setenv", "GOPROXY", "off",
		"--setenv", "PATH", "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin",
		"--unshare-all", "--die-with-parent", "--new-session",
		"/usr/bin/strace", "-f", "-qq", "-y", "-v", "-s", "4096", "-o", "/trace/t", "-e", "signal=none",
		"-e", "trace=execve,open,openat,creat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,truncate",
		"/usr/bin/bash", "-c", src)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bwrap", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil && strings.Contains(stderr.String(), "bwrap:") {
		t.Fatalf("bwrap: %v: %s", err, stderr.String())
	}
	trace, err := os.ReadFile(filepath.Join(scratch, "trace", "t"))
	if err != nil {
		t.Fatalf("no trace of %q: %v (stderr %q)", src, err, stderr.String())
	}
	return string(trace)
}

// realEvent is one traced system call: an exec (with its argv), a read or
// a write of a path.
type realEvent struct {
	kind string // "exec", "read", "write"
	path string
	argv []string
}

var (
	// realOpenRE: openat(AT_FDCWD</work/proj>, "x", O_RDONLY) = 3</work/proj/x>
	realOpenRE = regexp.MustCompile(`^\d+ +(?:open|openat|creat)\((?:[^,]*, )?("(?:[^"\\]|\\.)*")(?:, ([A-Z_|]+))?.*\) = (-?\d+)(?:<([^>]*)>)?`)
	// realPathOpRE: unlinkat(AT_FDCWD</work/proj>, "x", 0) = 0, mkdir("x", 0755)…
	realPathOpRE = regexp.MustCompile(`^\d+ +(?:unlink|unlinkat|rename|renameat|renameat2|mkdir|mkdirat|truncate)\((?:[A-Z_]*<([^>]*)>, |\d+<([^>]*)>, )?("(?:[^"\\]|\\.)*")`)
	realExecRE   = regexp.MustCompile(`^\d+ +execve\(("(?:[^"\\]|\\.)*"), \[((?:"(?:[^"\\]|\\.)*"(?:, )?)*)\].*\) = 0`)
	realStrRE    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// realUnquote reads a string as strace prints it (C escapes).
func realUnquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}

// realEvents reads a trace: successful execs, files opened for reading
// (successfully: the decoy exists), and every attempt to write, create,
// remove or rename a path, whether or not the sandbox let it.
func realEvents(trace string) []realEvent {
	var evs []realEvent
	for _, line := range realJoinResumed(trace) {
		if m := realExecRE.FindStringSubmatch(line); m != nil {
			var argv []string
			for _, a := range realStrRE.FindAllString(m[2], -1) {
				argv = append(argv, realUnquote(a))
			}
			evs = append(evs, realEvent{kind: "exec", path: realUnquote(m[1]), argv: argv})
			continue
		}
		if m := realOpenRE.FindStringSubmatch(line); m != nil {
			writes := strings.Contains(m[2], "O_WRONLY") || strings.Contains(m[2], "O_RDWR") ||
				strings.Contains(m[2], "O_CREAT") || strings.HasPrefix(strings.TrimSpace(line[strings.Index(line, " "):]), "creat(")
			p := m[4]
			if p == "" {
				p = realUnquote(m[1]) // a failed open: the path as given
			}
			switch {
			case writes:
				evs = append(evs, realEvent{kind: "write", path: p})
			case m[3] != "-1" && !strings.Contains(m[2], "O_DIRECTORY"):
				evs = append(evs, realEvent{kind: "read", path: p})
			}
			continue
		}
		if m := realPathOpRE.FindStringSubmatch(line); m != nil {
			p := realUnquote(m[3])
			if base := m[1] + m[2]; !filepath.IsAbs(p) && base != "" {
				p = filepath.Join(base, p)
			}
			evs = append(evs, realEvent{kind: "write", path: p})
		}
	}
	return evs
}

// realJoinResumed returns the lines of a trace with the calls a thread
// switch split ("openat(… <unfinished ...>" then "<... openat resumed>)
// = 4</x>") joined again.
func realJoinResumed(trace string) []string {
	pending := map[string]string{}
	var out []string
	for _, line := range strings.Split(trace, "\n") {
		pid, _, _ := strings.Cut(line, " ")
		if head, ok := strings.CutSuffix(line, " <unfinished ...>"); ok {
			pending[pid] = head
			continue
		}
		if i := strings.Index(line, " resumed>"); i >= 0 && strings.Contains(line[:i], "<... ") {
			line = pending[pid] + line[i+len(" resumed>"):]
			delete(pending, pid)
		}
		out = append(out, line)
	}
	return out
}

// realJudgesExec is policy.OracleJudgesExec, where a command's "{}" (the
// results find -exec, fd -x and xargs put there) stands for any words.
func realJudgesExec(a shell.Analysis, exe string, argv []string) bool {
	if policy.OracleJudgesExec(a, exe, argv) {
		return true
	}
	if realJudgesGo(a, exe, argv) {
		// The go command runs itself as its telemetry child (go's
		// internal/telemetry start: the same binary, no arguments of the
		// caller's): the program the analysis judged.
		return true
	}
	got := strings.Join(append([]string{filepath.Base(exe)}, argv[1:]...), " ")
	for _, c := range a.Commands {
		if c.Redirect || len(c.Words) == 0 || !strings.Contains(strings.Join(c.Words, " "), "{") {
			continue
		}
		words := append([]string{c.Name}, c.Words[1:]...)
		re := regexp.QuoteMeta(strings.Join(words, " "))
		re = regexp.MustCompile(`\\\{[^ ]*\\\}`).ReplaceAllString(re, `.*`)
		if regexp.MustCompile("^" + re + "$").MatchString(got) {
			return true
		}
	}
	return false
}

// realJudgesGo reports go's telemetry child when the analysis judged a go
// command.
func realJudgesGo(a shell.Analysis, exe string, argv []string) bool {
	if len(argv) != 2 || argv[1] != "** telemetry **" || filepath.Base(exe) != "go" {
		return false
	}
	for _, c := range a.Commands {
		if c.Name == "go" && c.Unanalysable == "" {
			return true
		}
	}
	return false
}

// realViolations returns what the trace of src shows that the policy
// would not have let through: reads and writes its file rules deny,
// programs the analysis did not judge.
func realViolations(p *policy.Policy, src, trace string) []string {
	a := policy.AnalyzeWithTable(p, src)
	var out []string
	first := true
	for _, e := range realEvents(trace) {
		switch e.kind {
		case "exec":
			if first {
				first = false // bash itself
				continue
			}
			if !realJudgesExec(a, e.path, e.argv) {
				out = append(out, fmt.Sprintf("executed %s %q, which the analysis did not judge", e.path, e.argv))
			}
		case "read", "write":
			if e.path == "" || strings.HasPrefix(e.path, "/dev/") || strings.HasPrefix(e.path, "/proc/") {
				continue
			}
			tool := e.kind + "_file"
			args, _ := json.Marshal(map[string]string{"path": e.path, "content": ""})
			if d := p.Evaluate(policy.Call{Tool: tool, Arguments: args, Cwd: oracleCwd}); d.Action == policy.Deny {
				out = append(out, fmt.Sprintf("%ss %s, which %s denies", e.kind, e.path, d.Rule))
			}
		}
	}
	return out
}

// realCases are the commands the oracle runs: whether the engine must
// allow them, and whether their trace shows what the rules deny (which an
// allowed call must never show).
var realCases = []struct {
	src             string
	allowed, unsafe bool
}{
	{"find . -name '*.go'", true, false},
	{"find . -name '*.go' -exec wc -l {} +", true, false},
	{"find src -type f -newer go.mod -print", true, false},
	{"rg -n package .", true, false},
	{"rg -g '*.go' -t go func", true, false},
	{"fdfind -e go", true, false},
	{"fdfind -e go -x wc -l", true, false},
	{"node app.js", true, false},
	{"go version", true, false},
	{"go list -m", true, false},
	{"find . -exec cat /home/dev/.ssh/id_rsa {} +", false, true},
	{"find . -name notes.txt -exec bash {} ';'", false, true},
	{"fdfind -e go -x cat /home/dev/.ssh/id_rsa", false, true},
	{"fdfind notes -X bash", false, true},
	{"rg --pre bash DECOY notes.txt", false, true},
	{"node -e 'require(\"fs\").readFileSync(\"/home/dev/.ssh/id_rsa\")'", false, true},
	{"node --require /home/dev/.ssh/id_rsa app.js", false, true},
	// Reads through filters: the file a name pattern matches is read.
	{"find . -name .env -exec cat {} +", false, true},
	// -j1: rg's parallel walker opened .env on a thread whose open the
	// trace did not show, three times in runs under heavy load; one
	// thread keeps the case about the filter, not about the tracer.
	{"rg -j1 --hidden -g .env DECOY .", false, true},
	{"fdfind -H -g .env -x cat", false, true},
	{"rg --hidden -g '*.go' package .", true, false},
}

// TestRealProgramOracle runs every case for real: an allowed call must
// trace clean, an unsafe one must show the oracle what it does, and the
// engine must allow exactly the cases it should.
func TestRealProgramOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("the real-program oracle runs sandboxes")
	}
	realSetup(t)
	p := mustParseReal(t, realPolicy)
	for _, c := range realCases {
		t.Run(c.src, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": c.src})
			d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args, Cwd: oracleCwd})
			trace := realRun(t, c.src)
			bad := realViolations(p, c.src, trace)
			for try := 1; c.unsafe && len(bad) == 0 && try < 3; try++ {
				// A threaded runner under strace (fd -x on a loaded
				// machine) has shown an empty run once: run it again
				// before calling the case blind.
				trace = realRun(t, c.src)
				bad = realViolations(p, c.src, trace)
			}
			switch {
			case d.Action == policy.Allow && len(bad) > 0:
				t.Errorf("allowed, but its trace shows: %s", strings.Join(bad, "; "))
			case (d.Action == policy.Allow) != c.allowed:
				t.Errorf("engine: %s (%s), want allowed=%v", d.Action, d.Reason, c.allowed)
			case c.unsafe && len(bad) == 0:
				if len(trace) > 4000 {
					trace = trace[len(trace)-4000:]
				}
				t.Errorf("the trace shows nothing the rules deny: the case does not test the oracle; its last run's trace ends:\n%s", trace)
			}
		})
	}
}

// TestRealOracleCatchesPlantedRegression plants a regression in the
// program table — a policy whose programs: section says rg's --pre has no
// effect, forgetting that it runs a program on every file — and checks
// that the oracle catches it: the engine now allows `rg --pre bash`, and
// the trace shows bash run unjudged and the decoy secret read.
func TestRealOracleCatchesPlantedRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("the real-program oracle runs sandboxes")
	}
	realSetup(t)
	planted := mustParseReal(t, realPolicy+"programs:\n  rg:\n    options: {\"--pre=\": none}\n")
	src := "rg --pre bash DECOY notes.txt"
	args, _ := json.Marshal(map[string]string{"command": src})
	if d := planted.Evaluate(policy.Call{Tool: "bash", Arguments: args, Cwd: oracleCwd}); d.Action != policy.Allow {
		t.Fatalf("the planted table does not allow %q (%s: %s): the regression is not planted", src, d.Action, d.Reason)
	}
	bad := realViolations(planted, src, realRun(t, src))
	var execd, read bool
	for _, b := range bad {
		execd = execd || strings.Contains(b, "executed /usr/bin/bash")
		read = read || strings.Contains(b, "reads /home/dev/.ssh/id_rsa")
	}
	if !execd || !read {
		t.Errorf("the oracle did not catch the planted regression: %q", bad)
	}
	t.Logf("planted regression caught: %s", strings.Join(bad, "; "))
}

func mustParseReal(t *testing.T, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(src), "real.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// TestRealTraceReader pins the strace lines the oracle reads: a
// successful exec with its argv (quotes and escapes), a read annotated
// with its path, a failed read (not counted: nothing was read), a write
// attempt the sandbox refused (counted: the program tried), a removal
// relative to a directory descriptor.
func TestRealTraceReader(t *testing.T) {
	trace := `7     execve("/usr/bin/cat", ["cat", "a \"b\"", "]x"], ["HOME=/home/dev"]) = 0
7     execve("/usr/local/bin/cat", ["cat"], ["HOME=/home/dev"]) = -1 ENOENT (No such file or directory)
7     openat(AT_FDCWD</work/proj>, "./.env", O_RDONLY) = 3</work/proj/.env>
7     openat(AT_FDCWD</work/proj>, "/home/dev/.gitconfig", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)
7     openat(AT_FDCWD</work/proj>, "/etc/x", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (Read-only file system)
7     openat(AT_FDCWD</work/proj>, ".", O_RDONLY|O_DIRECTORY) = 3</work/proj>
8     unlinkat(4</work/proj/build>, "x.o", 0) = 0
9     openat(AT_FDCWD</work/proj>, "./a.go", O_RDONLY|O_CLOEXEC <unfinished ...>
10    execve("/usr/bin/true", ["true"], []) = 0
9     <... openat resumed>) = 5</work/proj/a.go>
`
	got := realEvents(trace)
	want := []realEvent{
		{kind: "exec", path: "/usr/bin/cat", argv: []string{"cat", `a "b"`, "]x"}},
		{kind: "read", path: "/work/proj/.env"},
		{kind: "write", path: "/etc/x"},
		{kind: "write", path: "/work/proj/build/x.o"},
		{kind: "exec", path: "/usr/bin/true", argv: []string{"true"}},
		{kind: "read", path: "/work/proj/a.go"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("realEvents =\n%v\nwant\n%v", got, want)
	}
	a := shell.Analyze("find . -exec wc -l {} +")
	if !realJudgesExec(a, "/usr/bin/wc", []string{"wc", "-l", "./a", "./b"}) {
		t.Error("wc -l with find's results is not judged as find -exec wc -l {}")
	}
	if realJudgesExec(a, "/usr/bin/cat", []string{"cat", "./a"}) {
		t.Error("cat passes for find -exec wc -l {}")
	}
}
