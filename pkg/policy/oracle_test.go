package policy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// The differential oracle (issue 12, item 4): every corpus command runs in
// real bash, inside a bubblewrap sandbox where every program on the system
// paths is a stub that records what bash executed (testdata/oraclestub),
// nothing outside a scratch directory is writable, and there is no
// network. The test then asserts, for every command the analysis says it
// judged completely, that
//
//   - every program bash executed is one the analysis judged (its name,
//     and its arguments within the analysis' description of them), and
//   - every file a redirection opened, for reading or writing, is one the
//     analysis judged.
//
// A command the analysis could not judge completely must never be allowed,
// in any mode: that is asserted instead.
//
// How files are observed, without strace or LD_PRELOAD: the scratch (the
// working directory /work/proj, the home /home/dev, /tmp) is watched with
// inotify from outside the sandbox, which sees every open of a file in it;
// everything else is read-only, so a redirection to a path outside fails
// and bash says so on standard error ("bash: line 1: /etc/x: Read-only file
// system"), which the test reads. Reads of existing files outside the
// scratch are not observed: the corpus aims its reads at the scratch.
//
// bash and dash are real (so sh -c and bash -c scripts really run, and
// their commands are recorded); every other program is the stub, which
// runs nothing, so a wrapper (sudo, env, xargs) is recorded with its
// arguments but what it would run is not executed.

const (
	oracleCwd  = "/work/proj"
	oracleHome = "/home/dev"
)

// oracleSandbox is the stub tree, built once per test binary.
type oracleSandbox struct {
	root string   // holds stub copies of the system program directories
	dirs []string // the system directories replaced by stubs
	err  error
}

var (
	oracleOnce sync.Once
	oracleSB   oracleSandbox
)

// oracleSetup builds the stub and the stub directories, and checks that
// bwrap runs here. A missing or broken bwrap skips the test, or fails it
// when CI=true.
func oracleSetup(t testing.TB) *oracleSandbox {
	t.Helper()
	oracleOnce.Do(func() { oracleSB.err = oracleSB.build() })
	if oracleSB.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the shell oracle cannot run: %v (install bubblewrap: scripts/test-deps.sh)", oracleSB.err)
		}
		t.Skipf("the shell oracle cannot run: %v", oracleSB.err)
	}
	return &oracleSB
}

func (sb *oracleSandbox) build() error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return fmt.Errorf("bwrap not found: %w", err)
	}
	root, err := os.MkdirTemp("", "signoff-oracle-")
	if err != nil {
		return err
	}
	sb.root = root
	stub := filepath.Join(root, "oraclestub")
	build := exec.Command("go", "build", "-o", stub, "./testdata/oraclestub")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the stub: %v\n%s", err, out)
	}
	for _, dir := range []string{"/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/games"} {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		mirror := filepath.Join(root, strings.ReplaceAll(strings.TrimPrefix(dir, "/"), "/", "_"))
		if err := os.MkdirAll(mirror, 0o755); err != nil {
			return err
		}
		for _, e := range entries {
			src := filepath.Join(dir, e.Name())
			dst := filepath.Join(mirror, e.Name())
			if e.Type()&os.ModeSymlink != 0 && oracleResolvesInto(src) {
				// Mirror links that end on a system path (sh -> dash, awk ->
				// /etc/alternatives/awk -> mawk): in the sandbox they resolve
				// to stubs or to the real shells. A link elsewhere (npm ->
				// a script under /usr/lib) becomes a stub itself.
				target, err := os.Readlink(src)
				if err != nil {
					return err
				}
				if err := os.Symlink(target, dst); err != nil {
					return err
				}
				continue
			}
			if e.IsDir() || e.Type()&os.ModeSymlink != 0 && oracleIsDir(src) {
				continue
			}
			if err := os.Link(stub, dst); err != nil {
				return err
			}
		}
		sb.dirs = append(sb.dirs, dir)
	}
	// A first run proves bwrap works in this container.
	r, err := sb.run(context.Background(), "true")
	if err != nil {
		return fmt.Errorf("bwrap does not run here: %v (stderr %q)", err, r.stderr)
	}
	return nil
}

// oracleResolvesInto reports whether the link src ends on a file of one
// of the directories the sandbox replaces with stubs.
func oracleResolvesInto(src string) bool {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return false
	}
	switch filepath.Dir(real) {
	case "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/games":
		return true
	}
	return false
}

func oracleIsDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// oracleExec is one program the stub recorded.
type oracleExec struct {
	Exe  string   `json:"exe"`
	Argv []string `json:"argv"`
}

// oracleRun is what one command did in the sandbox.
type oracleRun struct {
	execs    []oracleExec
	opened   []string // files of the scratch opened (sandbox paths)
	refused  []string // paths a redirection could not open (read-only…)
	stderr   string
	timedOut bool
}

// oracleRedirectErr matches bash's and dash's report of a redirection
// they could not open: "bash: line 1: /etc/x: Read-only file system",
// "sh: 1: cannot create /etc/x: Read-only file system".
var oracleRedirectErr = regexp.MustCompile(`^[a-z/]*(?:bash: line \d+|sh: \d+|dash: \d+): (?:cannot create |cannot open )?([^:]+): (?:Read-only file system|Permission denied|No such file or directory|Is a directory|Directory nonexistent|nonexistent directory)$`)

// oracleZshRedirectErr matches zsh's report of a redirection it could
// not open: "(eval):1: read-only file system: /etc/x".
var oracleZshRedirectErr = regexp.MustCompile(`^(?:\(eval\)|zsh):\d+: (?:read-only file system|permission denied|no such file or directory|is a directory|not a directory): (.+)$`)

// oracleShell is how a shell runs a script in the sandbox.
type oracleShell struct {
	name string
	argv func(src string) []string
	errs []*regexp.Regexp // its reports of redirections it could not open (and those of the shells it runs)
}

var (
	oracleBash = oracleShell{"bash", func(src string) []string { return []string{"/usr/bin/bash", "-c", src} }, []*regexp.Regexp{oracleRedirectErr}}
	// oracleZsh runs the script as Claude Code's Bash tool does where the
	// user's login shell is zsh: extended_glob off, the command eval'ed
	// (no start-up files here: -f).
	oracleZsh = oracleShell{"zsh", func(src string) []string {
		return []string{"/usr/bin/zsh", "-f", "-c", `setopt NO_EXTENDED_GLOB; eval "$1"`, "zsh", src}
	}, []*regexp.Regexp{oracleZshRedirectErr, oracleRedirectErr}}
)

// run runs src with bash in a fresh scratch, in the sandbox.
func (sb *oracleSandbox) run(ctx context.Context, src string) (oracleRun, error) {
	return sb.runIn(ctx, oracleBash, src)
}

// runIn runs src with sh in a fresh scratch, in the sandbox.
func (sb *oracleSandbox) runIn(ctx context.Context, sh oracleShell, src string) (oracleRun, error) {
	var r oracleRun
	scratch, err := os.MkdirTemp("", "signoff-oracle-run-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(scratch)
	host := map[string]string{ // scratch dir -> sandbox dir
		filepath.Join(scratch, "proj"): oracleCwd,
		filepath.Join(scratch, "home"): oracleHome,
		filepath.Join(scratch, "tmp"):  "/tmp",
	}
	seed := map[string]string{
		"proj/.env": "KEY=secret\n", "proj/.env.local": "KEY=2\n", "proj/list.txt": "a\nb\n", "proj/file": "x\n",
		"proj/file.txt": "x\n", "proj/README.md": "# r\n", "proj/go.mod": "module x\n", "proj/main.go": "package main\n",
		"proj/src/a.go": "package a\n", "proj/build/x.o": "", "home/.ssh/id_rsa": "KEY\n", "home/.bashrc": "# rc\n",
		"home/.profile": "# p\n", "tmp/.keep": "", "log/.keep": "",
	}
	for name, body := range seed {
		p := filepath.Join(scratch, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return r, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return r, err
		}
	}
	// Watch every directory of the scratch (but the log).
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return r, err
	}
	defer unix.Close(fd)
	wds := map[int32]string{}
	for hostDir, sandboxDir := range host {
		err := filepath.WalkDir(hostDir, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_CREATE)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(hostDir, p)
			wds[int32(wd)] = filepath.Join(sandboxDir, rel)
			return nil
		})
		if err != nil {
			return r, err
		}
	}

	// Only what bash needs is bound (not the whole root: the machine's
	// other mounts come and go, and a recursive bind of / races them).
	args := []string{"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"}
	for _, l := range []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"} {
		if target, err := os.Readlink(l); err == nil {
			args = append(args, "--symlink", target, l)
		} else if fi, err := os.Stat(l); err == nil && fi.IsDir() {
			args = append(args, "--ro-bind", l, l)
		}
	}
	for _, d := range sb.dirs {
		args = append(args, "--ro-bind", filepath.Join(sb.root, strings.ReplaceAll(strings.TrimPrefix(d, "/"), "/", "_")), d)
	}
	for _, real := range []string{"/usr/bin/bash", "/usr/bin/dash", "/usr/bin/zsh"} {
		if _, err := os.Stat(real); err == nil {
			args = append(args, "--ro-bind", real, real)
		}
	}
	args = append(args,
		"--proc", "/proc", "--dev", "/dev",
		"--tmpfs", "/work", "--bind", filepath.Join(scratch, "proj"), oracleCwd,
		"--dir", "/mnt", "--dir", "/var/tmp", "--dir", "/root",
		"--tmpfs", "/home", "--bind", filepath.Join(scratch, "home"), oracleHome,
		"--bind", filepath.Join(scratch, "tmp"), "/tmp",
		"--bind", filepath.Join(scratch, "log"), "/mnt",
		"--remount-ro", "/", // the sandbox's own root: nothing but the scratch is writable
		"--chdir", oracleCwd,
		"--clearenv", "--setenv", "HOME", oracleHome, "--setenv", "LANG", "C.UTF-8",
		"--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
	)
	args = append(args, sh.argv(src)...)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bwrap", args...)
	// The sandbox's own processes die with bwrap (--die-with-parent, its
	// pid namespace); WaitDelay bounds the wait for the pipes regardless.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = nil
	cmd.Stdin = nil
	runErr := cmd.Run()
	r.stderr = stderr.String()
	r.timedOut = ctx.Err() != nil
	if runErr != nil && !r.timedOut {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return r, runErr
		}
		if ee.ExitCode() != 0 && strings.Contains(r.stderr, "bwrap:") {
			return r, fmt.Errorf("bwrap: %s", strings.TrimSpace(r.stderr))
		}
	}

	if log, err := os.ReadFile(filepath.Join(scratch, "log", "exec.log")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(log))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e oracleExec
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				r.execs = append(r.execs, e)
			}
		}
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			p := filepath.Join(wds[ev.Wd], name)
			if ev.Mask&unix.IN_ISDIR != 0 || name == "" || strings.HasPrefix(name, "sh-thd") ||
				len(name) == len("zsh")+6 && strings.HasPrefix(p, "/tmp/zsh") {
				continue // bash's and zsh's here-document files
			}
			if !slices.Contains(r.opened, p) {
				r.opened = append(r.opened, p)
			}
		}
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		for _, re := range sh.errs {
			if m := re.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "command not found") {
				r.refused = append(r.refused, m[1])
				break
			}
		}
	}
	return r, nil
}

// oracleCheck runs one command in bash and returns what the analysis
// missed, or "" when it judged everything bash did.
func oracleCheck(t testing.TB, sb *oracleSandbox, p *policy.Policy, src string) string {
	t.Helper()
	return oracleCheckIn(t, sb, oracleBash, p, src)
}

// oracleCheckIn runs one command with sh and returns what the analysis
// missed, or "" when it judged everything the shell did.
func oracleCheckIn(t testing.TB, sb *oracleSandbox, sh oracleShell, p *policy.Policy, src string) string {
	t.Helper()
	a := shell.Analyze(src)
	for _, s := range a.Safety {
		if strings.HasPrefix(s, "fork bomb") {
			return "" // not run: it would be one
		}
	}
	if why := policy.OracleUnanalysable(a); why != "" {
		// Not judged completely: it must never be allowed, in any mode.
		for _, m := range []policy.Mode{policy.ModeYolo, policy.ModeAutoEdit, ""} {
			args, _ := json.Marshal(map[string]string{"command": src})
			if d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args, Mode: m}); d.Action == policy.Allow {
				return fmt.Sprintf("unanalysable (%s) but allowed in mode %q", why, m)
			}
		}
		return ""
	}
	r, err := sb.runIn(context.Background(), sh, src)
	if err != nil {
		t.Fatalf("running %q in %s: %v", src, sh.name, err)
	}
	var missed []string
	for _, e := range r.execs {
		if !policy.OracleJudgesExec(a, e.Exe, e.Argv) && !policy.OracleJudgesExec(a, e.Exe, oracleRelArgs(e.Argv)) {
			missed = append(missed, fmt.Sprintf("%s executed %s %q, which the analysis did not judge", sh.name, e.Exe, e.Argv))
		}
	}
	for _, f := range append(r.opened, r.refused...) {
		abs := f
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(oracleCwd, abs)
		}
		abs = filepath.Clean(abs)
		if oracleIsCommandName(a, f) {
			continue // "./build.sh: No such file or directory" is not a redirection
		}
		if !policy.OracleJudgesFile(a, abs, oracleCwd, oracleHome) {
			missed = append(missed, fmt.Sprintf("a redirection opened %s, which the analysis did not judge", f))
		}
	}
	return strings.Join(missed, "; ")
}

// oracleRelArgs is argv with the working directory in its arguments
// spelled ".", as the analysis reads $PWD and $(pwd): ls $(pwd)/src ran
// ls /work/proj/src, which the analysis judged as ls ./src.
func oracleRelArgs(argv []string) []string {
	out := slices.Clone(argv)
	for i := 1; i < len(out); i++ {
		if out[i] == oracleCwd {
			out[i] = "."
		} else if rest, ok := strings.CutPrefix(out[i], oracleCwd+"/"); ok {
			out[i] = "./" + rest
		}
	}
	return out
}

// oracleIsCommandName reports a path that is the name of an analysed
// command: bash's "No such file or directory" for it is a failed exec.
func oracleIsCommandName(a shell.Analysis, p string) bool {
	for _, c := range a.Commands {
		if c.Redirect || len(c.Words) == 0 {
			continue
		}
		name := c.Words[0]
		if rest, ok := strings.CutPrefix(name, "~/"); ok {
			name = oracleHome + "/" + rest
		} else if name == "~" {
			name = oracleHome
		}
		for _, n := range []string{name, oracleAssignTilde(name)} {
			if n == p || !filepath.IsAbs(n) && filepath.Join(oracleCwd, n) == p {
				return true
			}
		}
	}
	return false
}

// oracleAssignTilde expands what bash expands in a word that looks like an
// assignment (name=value), also as a command's argument or name outside
// POSIX mode: a tilde right after the first '=' or after a ':' in the
// value (exec a=~/b runs "a=/home/dev/b"). The word is the name of the
// command bash failed to run, not a path it opened.
func oracleAssignTilde(w string) string {
	name, value, ok := strings.Cut(w, "=")
	if !ok || name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9')
	}) || name[0] >= '0' && name[0] <= '9' {
		return w
	}
	parts := strings.Split(value, ":")
	for i, part := range parts {
		if rest, ok := strings.CutPrefix(part, "~/"); ok {
			parts[i] = oracleHome + "/" + rest
		} else if part == "~" {
			parts[i] = oracleHome
		}
	}
	return name + "=" + strings.Join(parts, ":")
}

// oracleEach calls run(0) … run(n-1), four sandboxes at a time.
func oracleEach(n int, run func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				run(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// TestShellOracle runs every corpus command in real bash and checks that
// the analysis judged everything bash executed or opened.
func TestShellOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("the oracle runs hundreds of sandboxes")
	}
	sb := oracleSetup(t)
	p := corpusPolicy(t)
	cases := readCorpora(t)
	type result struct {
		c      corpusCase
		missed string
	}
	results := make([]result, len(cases))
	oracleEach(len(cases), func(i int) {
		results[i] = result{cases[i], oracleCheck(t, sb, p, cases[i].command)}
	})
	var failures []string
	for _, r := range results {
		if r.missed != "" {
			failures = append(failures, fmt.Sprintf("%s:%d: %q: %s", r.c.file, r.c.line, r.c.command, r.missed))
		}
	}
	t.Logf("oracle: %d corpus commands run, %d where the analysis missed what bash did", len(cases), len(failures))
	if len(failures) > 0 {
		t.Errorf("the analysis missed what bash did:\n%s", strings.Join(failures, "\n"))
	}
}

// TestZshReadingOracle runs every corpus command the analysis judged
// completely in real zsh too, as Claude Code's Bash tool runs it where the
// user's login shell is zsh (shell_zsh.go): whatever zsh executed or
// opened must be something the analysis judged. A command the analysis
// left unjudged must never be allowed (TestShellOracle asserts that).
func TestZshReadingOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("the oracle runs hundreds of sandboxes")
	}
	sb := oracleSetup(t)
	if _, err := os.Stat("/usr/bin/zsh"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the zsh oracle cannot run: %v (install zsh: scripts/test-deps.sh)", err)
		}
		t.Skipf("the zsh oracle cannot run: %v", err)
	}
	p := corpusPolicy(t)
	var cases []corpusCase
	for _, c := range readCorpora(t) {
		if policy.OracleUnanalysable(shell.Analyze(c.command)) == "" {
			cases = append(cases, c)
		}
	}
	failures := make([]string, len(cases))
	oracleEach(len(cases), func(i int) {
		if m := oracleCheckIn(t, sb, oracleZsh, p, cases[i].command); m != "" {
			failures[i] = fmt.Sprintf("%s:%d: %q: %s", cases[i].file, cases[i].line, cases[i].command, m)
		}
	})
	failures = slices.DeleteFunc(failures, func(s string) bool { return s == "" })
	t.Logf("zsh oracle: %d corpus commands the analysis judged completely run in zsh, %d where it missed what zsh did", len(cases), len(failures))
	if len(cases) < 300 {
		t.Errorf("only %d corpus commands were judged completely: the zsh reading check refuses too much to be tested", len(cases))
	}
	if len(failures) > 0 {
		t.Errorf("the analysis missed what zsh did:\n%s", strings.Join(failures, "\n"))
	}
}

// TestShellOracleSeesWhatBashRuns checks the oracle itself: a program run
// through a substitution and a redirection into the scratch are observed,
// and an analysis that did not judge them is caught.
func TestShellOracleSeesWhatBashRuns(t *testing.T) {
	sb := oracleSetup(t)
	r, err := sb.run(context.Background(), `echo "$(rm -rf build)" > out.txt; cat < .env; echo x > /etc/hosts; echo > /x`)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, e := range r.execs {
		ran = append(ran, strings.Join(e.Argv, " "))
	}
	if !slices.Contains(ran, "rm -rf build") || !slices.Contains(ran, "cat") {
		t.Errorf("the stubs recorded %q, want rm -rf build and cat among them", ran)
	}
	for _, want := range []string{oracleCwd + "/out.txt", oracleCwd + "/.env"} {
		if !slices.Contains(r.opened, want) {
			t.Errorf("opened files %q, want %s among them", r.opened, want)
		}
	}
	if !slices.Contains(r.refused, "/etc/hosts") || !slices.Contains(r.refused, "/x") {
		t.Errorf("refused redirections %q, want /etc/hosts and /x (stderr %q)", r.refused, r.stderr)
	}
	blind := shell.Analyze("echo hi")
	if policy.OracleJudgesExec(blind, "/usr/bin/rm", []string{"rm", "-rf", "build"}) {
		t.Error("an analysis of `echo hi` passes for having judged rm -rf build")
	}
	if policy.OracleJudgesFile(blind, oracleCwd+"/.env", oracleCwd, oracleHome) {
		t.Error("an analysis of `echo hi` passes for having judged a read of .env")
	}
}
