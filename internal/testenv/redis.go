package testenv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServerEnv names the environment variable that overrides the
// redis-server binary; by default it is looked up in PATH.
const RedisServerEnv = "SIGNOFF_REDIS_SERVER"

// redisStartTimeout bounds how long a redis-server may take to answer PING.
const redisStartTimeout = 10 * time.Second

// RedisOption configures a [RedisServer].
type RedisOption func(*redisConfig)

type redisConfig struct {
	aof       bool
	cluster   bool
	replicaOf *RedisServer
	sentinel  *sentinelConfig
	args      []string
}

type sentinelConfig struct {
	master *RedisServer
	name   string
}

// WithAOF turns the append-only file on (appendfsync always), so that data
// survives [RedisServer.Stop] and [RedisServer.Start]. By default the server
// persists nothing.
func WithAOF() RedisOption {
	return func(c *redisConfig) { c.aof = true }
}

// WithCluster starts the server in cluster mode as a one-node cluster that
// owns every hash slot. Redis then refuses any command or script that
// touches keys of more than one slot, so a test run against it proves that a
// store's key layout works on Redis Cluster. Use [RedisServer.ClusterClient].
func WithCluster() RedisOption {
	return func(c *redisConfig) { c.cluster = true }
}

// WithReplicaOf starts the server as a replica of master.
func WithReplicaOf(master *RedisServer) RedisOption {
	return func(c *redisConfig) { c.replicaOf = master }
}

// WithRedisArgs appends command-line arguments (for example
// "--maxmemory", "64mb") to redis-server's.
func WithRedisArgs(args ...string) RedisOption {
	return func(c *redisConfig) { c.args = append(c.args, args...) }
}

// RedisServer is a redis-server process started for one test. Its methods
// that change the process (Stop, Start, Pause, Resume) must be called from
// the test's goroutine; the others are safe for concurrent use.
type RedisServer struct {
	t    testing.TB
	bin  string
	dir  string
	cfg  redisConfig
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	log    *os.File
}

// Redis starts a redis-server on a free loopback port with its files in a
// temporary directory, waits until it answers PING and registers its
// shutdown with t.Cleanup. It fails the test when redis-server is missing or
// does not start.
func Redis(t testing.TB, opts ...RedisOption) *RedisServer {
	t.Helper()
	bin, err := redisBinary()
	if err != nil {
		t.Fatalf("%v", err)
	}
	s := &RedisServer{t: t, bin: bin, dir: t.TempDir()}
	for _, o := range opts {
		o(&s.cfg)
	}
	t.Cleanup(s.cleanup)

	// The free port is found by binding and closing a listener, so another
	// process may take it before redis-server binds: try a few ports.
	const attempts = 3
	for i := 1; ; i++ {
		s.port, err = freePort()
		if err != nil {
			t.Fatalf("testenv: redis: find a free port: %v", err)
		}
		err = s.start()
		if err == nil {
			break
		}
		if i == attempts {
			t.Fatalf("testenv: redis-server did not start: %v", err)
		}
	}
	if s.cfg.cluster {
		s.assignSlots()
	}
	return s
}

func redisBinary() (string, error) {
	const hint = "redis-server not found: run `make test` (installs it) or `apt-get install redis-server`"
	if p := os.Getenv(RedisServerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s (%s=%q: %v)", hint, RedisServerEnv, p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("%s (%v)", hint, err)
	}
	return p, nil
}

// freePort returns a loopback TCP port nobody listens on. It draws the
// port from below the kernel's ephemeral range when there is room: the
// kernel gives ephemeral ports to outgoing connections too, and a test
// binary makes many, so a port from there may be taken by a connection's
// local end before the caller binds it; below the range only another
// listener can take it.
func freePort() (int, error) {
	const low = 10000
	if top := ephemeralLow(); top-low >= 1000 {
		for range 20 {
			p := low + rand.IntN(top-low)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err == nil {
				l.Close()
				return p, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range, or 0
// when it cannot be read (not Linux).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return n
}

// Addr returns the server's host:port.
func (s *RedisServer) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL returns a redis:// URL of the server (database 0).
func (s *RedisServer) URL() string {
	return "redis://" + s.Addr() + "/0"
}

// Client returns a new client of the server, closed by t.Cleanup.
func (s *RedisServer) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// ClusterClient returns a new cluster client of a server started
// [WithCluster], closed by t.Cleanup.
func (s *RedisServer) ClusterClient() *redis.ClusterClient {
	if !s.cfg.cluster {
		s.t.Fatalf("testenv: ClusterClient on a redis-server started without WithCluster")
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr()}, DisableIdentity: true})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Sentinel starts a Redis Sentinel on a free loopback port that monitors
// master under name with a quorum of one, and fails over quickly: the
// master counts as down after 500 ms. Replicas started [WithReplicaOf] the
// master are found by the Sentinel itself.
func Sentinel(t testing.TB, master *RedisServer, name string) *RedisServer {
	t.Helper()
	return Redis(t, func(c *redisConfig) { c.sentinel = &sentinelConfig{master: master, name: name} })
}

func (s *RedisServer) args() []string {
	if sc := s.cfg.sentinel; sc != nil {
		conf := filepath.Join(s.dir, "sentinel.conf")
		body := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 1\n"+
			"sentinel down-after-milliseconds %[1]s 500\n"+
			"sentinel failover-timeout %[1]s 5000\n", sc.name, sc.master.port)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			s.t.Fatalf("testenv: sentinel config: %v", err)
		}
		return append([]string{conf, "--sentinel",
			"--port", strconv.Itoa(s.port),
			"--bind", "127.0.0.1",
			"--dir", s.dir,
			"--daemonize", "no",
			"--logfile", "",
			"--loglevel", "warning",
		}, s.cfg.args...)
	}
	a := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--daemonize", "no",
		"--logfile", "",
		"--loglevel", "warning",
	}
	if s.cfg.aof {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	if s.cfg.cluster {
		a = append(a, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	}
	if m := s.cfg.replicaOf; m != nil {
		a = append(a, "--replicaof", "127.0.0.1", strconv.Itoa(m.port))
	}
	return append(a, s.cfg.args...)
}

// start runs redis-server and waits until it answers PING.
func (s *RedisServer) start() error {
	log, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("%s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited, s.log = cmd, exited, log
	s.mu.Unlock()

	deadline := time.Now().Add(redisStartTimeout)
	for {
		select {
		case <-exited:
			s.closeLog()
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, s.logTail())
		default:
		}
		if err := ping(s.Addr()); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("redis-server on port %d did not answer PING within %v: %v; log: %s",
				s.port, redisStartTimeout, err, s.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping sends PING over a raw connection, so that the wait loop does not
// depend on a client's retry policy.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

func (s *RedisServer) assignSlots() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), redisStartTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
	defer c.Close()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		s.t.Fatalf("testenv: redis: CLUSTER ADDSLOTSRANGE: %v", err)
	}
	for {
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return
		}
		if ctx.Err() != nil {
			s.t.Fatalf("testenv: redis cluster did not reach cluster_state:ok: %v %q", err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (SIGKILL: no shutdown save, like a crash) and waits
// for it to exit; clients then get connection errors. Without [WithAOF] the
// data is lost.
func (s *RedisServer) Stop() {
	s.t.Helper()
	if !s.kill() {
		s.t.Fatalf("testenv: redis Stop: the server is not running")
	}
}

// Start restarts a stopped server on the same port and directory.
func (s *RedisServer) Start() {
	s.t.Helper()
	if s.running() {
		s.t.Fatalf("testenv: redis Start: the server is already running")
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("testenv: redis Start: %v", err)
	}
}

// Pause freezes the server with SIGSTOP: connections stay open and commands
// get no answer, which is what a client sees from a server stuck in a long
// command or a network partition. [RedisServer.Resume] continues it; the
// cleanup also does.
func (s *RedisServer) Pause() {
	s.t.Helper()
	s.signal(syscall.SIGSTOP)
}

// Resume continues a server frozen by [RedisServer.Pause].
func (s *RedisServer) Resume() {
	s.t.Helper()
	s.signal(syscall.SIGCONT)
}

func (s *RedisServer) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("testenv: redis %v: the server is not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("testenv: redis %v: %v", sig, err)
	}
}

// running reports whether the server process runs (not stopped).
func (s *RedisServer) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// kill stops the process and waits for it; it reports whether one ran.
func (s *RedisServer) kill() bool {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return false
	}
	_ = cmd.Process.Kill() // SIGKILL also ends a stopped process
	<-exited
	s.closeLog()
	return true
}

func (s *RedisServer) closeLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
}

func (s *RedisServer) cleanup() {
	s.kill()
	// t.TempDir removes the directory after this cleanup has run.
}

// logTail returns the end of the server's log, for failure messages.
func (s *RedisServer) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return "(empty log)"
	}
	return string(b)
}
