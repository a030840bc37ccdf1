package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
)

// runConfig is the orchestrator's command line.
type runConfig struct {
	natsServer  string
	broker      string
	compare     string
	redisServer string
	appendfsync string
	passes      int
	requests    int
	warmup      int
	concurrency intList
	replicas    intList
	replicaCPU  float64
	conns       int
	sessions    int
	modes       []string
	command     string
	keepDir     bool
}

// auditModes are the broker targets -modes can name: the --audit value,
// or off for --no-audit.
var auditModes = map[string]bool{"async": true, "strict": true, "off": true}

func parseRun(args []string, stderr io.Writer) (runConfig, error) {
	c := runConfig{concurrency: intList{1, 16}, replicas: intList{1}}
	var modes string
	fs := flag.NewFlagSet("procbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.natsServer, "nats-server", "nats-server", "nats-server binary (go build github.com/nats-io/nats-server/v2)")
	fs.StringVar(&c.broker, "broker", "broker", "broker binary (go build ./cmd/broker)")
	fs.StringVar(&c.compare, "compare", "", "another broker binary (an older commit's), measured as compare-<mode> in every -modes mode: an A/B in the same passes")
	fs.StringVar(&c.redisServer, "redis-server", "redis-server", "redis-server binary")
	fs.StringVar(&c.appendfsync, "appendfsync", "", "run Redis with an append-only file synced always, everysec or no (empty: no append-only file)")
	fs.IntVar(&c.passes, "passes", 5, "passes; each runs every target in turn")
	fs.IntVar(&c.requests, "requests", 5000, "requests measured per target, concurrency and pass")
	fs.IntVar(&c.warmup, "warmup", 500, "requests sent before each measurement")
	fs.Var(&c.concurrency, "concurrency", "requests in flight, comma-separated (one measurement each)")
	fs.Var(&c.replicas, "replicas", "broker processes per broker target, comma-separated (one target each); the replicas share the load through the queue group, and their CPU is summed")
	fs.Float64Var(&c.replicaCPU, "max-replica-cpu", 0, "bound: a run fails when a target of several replicas spends more than this many times one replica's CPU per request (0: no bound)")
	fs.IntVar(&c.conns, "conns", 0, "agent NATS connections the load is spread over (0: one per request in flight)")
	fs.IntVar(&c.sessions, "sessions", 1, "sessions the requests are spread over, one after the other (the audit appends a session's records of one linger as one message)")
	fs.StringVar(&modes, "modes", "async,strict", "broker audit modes measured against the baseline: async, strict, off (--no-audit)")
	fs.StringVar(&c.command, "command", "ls -la", "bash command of every request (the built-in policy allows it)")
	fs.BoolVar(&c.keepDir, "keep", false, "keep the work directory (process logs, JetStream store)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, m := range strings.Split(modes, ",") {
		if !auditModes[m] {
			return c, fmt.Errorf("-modes: %q is not async, strict or off", m)
		}
		c.modes = append(c.modes, m)
	}
	switch c.appendfsync {
	case "", "always", "everysec", "no":
	default:
		return c, fmt.Errorf("-appendfsync: %q is not always, everysec or no", c.appendfsync)
	}
	if c.passes < 1 || c.requests < 1 || c.sessions < 1 {
		return c, errors.New("-passes, -requests and -sessions must be at least 1")
	}
	for _, bin := range []*string{&c.natsServer, &c.broker, &c.compare, &c.redisServer} {
		if *bin == "" {
			continue
		}
		p, err := exec.LookPath(*bin)
		if err != nil {
			return c, fmt.Errorf("%s: %w", *bin, err)
		}
		*bin = p
	}
	return c, nil
}

// plane is the servers every target shares.
type plane struct {
	dir       string
	natsURL   string
	redisAddr string
	nats      *proc
	redis     *proc
}

// orchestrate runs the passes and returns their summary.
func orchestrate(ctx context.Context, c runConfig, stderr io.Writer) (*summary, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "procbench-")
	if err != nil {
		return nil, err
	}
	if c.keepDir {
		fmt.Fprintf(stderr, "procbench: work directory %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	p, err := startPlane(ctx, c, dir)
	if err != nil {
		return nil, err
	}
	defer p.stop()

	targets := targetNames(c)
	sum := newSummary(targets, c)
	for pass := 1; pass <= c.passes; pass++ {
		for _, target := range targets {
			if err := runTarget(ctx, c, p, self, target, pass, sum, stderr); err != nil {
				return nil, fmt.Errorf("pass %d, %s: %w", pass, target, err)
			}
		}
	}
	return sum, nil
}

// targetNames lists the targets of a run: the baseline, then per audit mode
// and replica count the compared broker (-compare) and the broker. A
// broker target of r > 1 replicas is named <broker>-<mode>-r<r>.
func targetNames(c runConfig) []string {
	targets := []string{"baseline"}
	for _, m := range c.modes {
		for _, r := range c.replicas {
			suffix := ""
			if r > 1 {
				suffix = fmt.Sprintf("-r%d", r)
			}
			if c.compare != "" {
				targets = append(targets, "compare-"+m+suffix)
			}
			targets = append(targets, "broker-"+m+suffix)
		}
	}
	return targets
}

// runTarget starts target, loads it at every concurrency and stops it.
func runTarget(ctx context.Context, c runConfig, p *plane, self, target string, pass int, sum *summary, stderr io.Writer) error {
	t, err := p.startTarget(ctx, c, self, target)
	if err != nil {
		return err
	}
	defer t.stop()
	for _, conc := range c.concurrency {
		cpu0, nats0 := t.cpu(), p.nats.cpu()
		out, err := exec.CommandContext(ctx, self, "load", "-nats", p.natsURL, "-requests", strconv.Itoa(c.requests),
			"-warmup", strconv.Itoa(c.warmup), "-concurrency", strconv.Itoa(conc), "-conns", strconv.Itoa(c.conns),
			"-sessions", strconv.Itoa(c.sessions), "-command", c.command).Output()
		var r loadResult
		if jerr := json.Unmarshal(out, &r); jerr != nil {
			return fmt.Errorf("load at concurrency %d: %v (%v); %s log:\n%s", conc, err, jerr, target, t.tail())
		}
		sent := float64(c.requests + c.warmup + 1)
		s := sample{loadResult: r,
			CPUMicros:     float64((t.cpu() - cpu0).Microseconds()) / sent,
			NATSCPUMicros: float64((p.nats.cpu() - nats0).Microseconds()) / sent}
		sum.add(target, conc, pass, s)
		fmt.Fprintf(stderr, "pass %d %-14s c=%-3d p50 %7.0f µs  p99 %7.0f µs  %8.0f req/s  cpu %5.1f µs/req  errors %d %s\n",
			pass, target, conc, r.P50Micros, r.P99Micros, r.PerSecond, s.CPUMicros, r.Errors, r.FirstError)
	}
	if !t.alive() {
		return fmt.Errorf("%s died during the run; log:\n%s", target, t.tail())
	}
	return nil
}

func startPlane(ctx context.Context, c runConfig, dir string) (*plane, error) {
	p := &plane{dir: dir}
	natsPort, redisPort := freePort(), freePort()
	var err error
	p.nats, err = start(ctx, dir, "nats-server", c.natsServer, "-a", "127.0.0.1", "-p", strconv.Itoa(natsPort),
		"-js", "-sd", filepath.Join(dir, "jetstream"))
	if err != nil {
		return nil, err
	}
	p.natsURL = fmt.Sprintf("nats://127.0.0.1:%d", natsPort)
	if err := waitFor(ctx, "nats-server", p.nats, func() error {
		nc, err := nats.Connect(p.natsURL)
		if err == nil {
			nc.Close()
		}
		return err
	}); err != nil {
		p.stop()
		return nil, err
	}
	aof := []string{"--appendonly", "no"}
	if c.appendfsync != "" {
		aof = []string{"--appendonly", "yes", "--appendfsync", c.appendfsync}
	}
	p.redis, err = start(ctx, dir, "redis-server", c.redisServer, append([]string{"--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1",
		"--save", "", "--dir", dir}, aof...)...)
	if err != nil {
		p.stop()
		return nil, err
	}
	p.redisAddr = fmt.Sprintf("127.0.0.1:%d", redisPort)
	if err := waitFor(ctx, "redis-server", p.redis, func() error {
		rdb := redis.NewClient(&redis.Options{Addr: p.redisAddr})
		defer rdb.Close()
		return rdb.Ping(ctx).Err()
	}); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (p *plane) stop() {
	for _, pr := range []*proc{p.redis, p.nats} {
		if pr != nil {
			pr.stop()
		}
	}
}

// startTarget starts the baseline or a broker's replicas and waits until
// they serve.
func (p *plane) startTarget(ctx context.Context, c runConfig, self, target string) (procs, error) {
	if target == "baseline" {
		t, err := start(ctx, p.dir, target, self, "baseline", "-nats", p.natsURL, "-redis", p.redisAddr)
		if err != nil {
			return nil, err
		}
		// The load role waits until the target answers.
		return procs{t}, nil
	}
	bin, rest, _ := strings.Cut(target, "-")
	mode, reps, _ := strings.Cut(rest, "-r")
	replicas, _ := strconv.Atoi(reps)
	bin = map[string]string{"broker": c.broker, "compare": c.compare}[bin]
	var ps procs
	for i := range max(replicas, 1) {
		t, err := p.startBroker(ctx, fmt.Sprintf("%s-%d", target, i+1), bin, mode)
		if err != nil {
			ps.stop()
			return nil, err
		}
		ps = append(ps, t)
	}
	return ps, nil
}

// startBroker starts one broker replica and waits until it is ready.
func (p *plane) startBroker(ctx context.Context, name, bin, mode string) (*proc, error) {
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort())
	args := []string{"--nats", p.natsURL, "--redis", "redis://" + p.redisAddr + "/0", "--http", httpAddr,
		"--replica", name, "--log-level", "warn",
		// The built-in policy allows the -command; production mode asks
		// for it by name.
		"--policy", "builtin"}
	if mode == "off" {
		args = append(args, "--no-audit")
	} else {
		args = append(args, "--audit", mode)
	}
	t, err := start(ctx, p.dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, name, t, func() error {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %s", resp.Status)
		}
		return nil
	}); err != nil {
		t.stop()
		return nil, err
	}
	return t, nil
}

// proc is one child process, its output in a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(ctx context.Context, dir, name, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	// The benchmark's NATS has no authorization: brokers are told so
	// through the environment, which a compared older broker without the
	// setting ignores (a flag would stop it).
	cmd.Env = append(os.Environ(), "SIGNOFF_INSECURE_NATS=true")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	go func() {
		select {
		case <-ctx.Done():
			p.stop()
		case <-p.done:
		}
	}()
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, and SIGKILL after 15 s.
func (p *proc) stop() {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// procs are the processes of one target (a broker's replicas).
type procs []*proc

// cpu is the processes' CPU time so far, summed.
func (ps procs) cpu() time.Duration {
	var d time.Duration
	for _, p := range ps {
		d += p.cpu()
	}
	return d
}

// alive reports whether every process still runs.
func (ps procs) alive() bool {
	for _, p := range ps {
		if !p.alive() {
			return false
		}
	}
	return true
}

func (ps procs) stop() {
	for _, p := range ps {
		p.stop()
	}
}

// tail is the end of every process's log.
func (ps procs) tail() string {
	var out []string
	for _, p := range ps {
		out = append(out, "== "+p.name+"\n"+p.tail())
	}
	return strings.Join(out, "\n")
}

// cpu is the process's user and system CPU time so far (Linux /proc).
func (p *proc) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// tail is the end of the process's log.
func (p *proc) tail() string {
	f, err := os.Open(p.log)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 30 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func waitFor(ctx context.Context, what string, p *proc, ready func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if !p.alive() {
			return fmt.Errorf("%s exited; log:\n%s", what, p.tail())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not ready: %v; log:\n%s", what, err, p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
