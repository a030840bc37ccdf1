package plane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/nats-io/nats.go"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Ports inside the containers.
const (
	natsClientPort  = "4222/tcp"
	natsMonitorPort = "8222/tcp"
	brokerHTTPPort  = "8080/tcp"
	redisPort       = "6379/tcp"
	botHTTPPort     = "8090/tcp"
)

// PolicyPath is where the policy file is copied in every broker container.
const PolicyPath = "/etc/signoff/policy.yaml"

// Labels put on every container and network of a plane.
const (
	labelPlane = "dev.signoff.itest"
	labelPID   = "dev.signoff.itest.pid"
	labelHost  = "dev.signoff.itest.host"
)

// Config describes a plane.
type Config struct {
	Images Images
	// NATSNodes is the size of the NATS cluster (default 3).
	NATSNodes int
	// Brokers is the number of broker replicas (default 3).
	Brokers int
	// Policy is the broker policy file (YAML), copied into every broker at
	// PolicyPath. Required.
	Policy []byte
	// BrokerArgs are more broker flags, after the plane's own (--nats,
	// --redis, --policy, --http, --replica, --audit-replicas).
	BrokerArgs []string
	// RedisArgs are the redis-server arguments (default: an append-only
	// file synced every second, no RDB snapshots).
	RedisArgs []string
	// StartTimeout bounds the start of each container (default 90 s).
	StartTimeout time.Duration
}

func (c *Config) setDefaults() {
	if c.Images == (Images{}) {
		c.Images = ImagesFromEnv()
	}
	if c.NATSNodes == 0 {
		c.NATSNodes = 3
	}
	if c.Brokers == 0 {
		c.Brokers = 3
	}
	if c.RedisArgs == nil {
		// always, as shipped (docs/OPERATIONS.md "What Signoff needs from
		// Redis"): nothing Redis acknowledged is lost to a kill -9.
		c.RedisArgs = []string{"--appendonly", "yes", "--appendfsync", "always", "--save", ""}
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 90 * time.Second
	}
}

func (c *Config) validate() error {
	switch {
	case len(c.Policy) == 0:
		return errors.New("plane: Config.Policy is required")
	case c.NATSNodes < 1 || c.Brokers < 1:
		return fmt.Errorf("plane: need at least one NATS node and one broker, got %d and %d", c.NATSNodes, c.Brokers)
	}
	return nil
}

// Plane is a running plane. Its methods are safe for concurrent use; the
// fault methods of its nodes are not meant to race with each other.
type Plane struct {
	cfg    Config
	run    string
	docker *testcontainers.DockerClient
	labels map[string]string

	// NATSNet joins the NATS nodes, the brokers and the approver bots;
	// RedisNet joins Redis and the brokers.
	NATSNet, RedisNet *testcontainers.DockerNetwork
	NATS              []*Node
	Redis             *Node
	Brokers           []*Node
}

// Start starts a plane and registers its removal with tb.Cleanup; it fails
// tb when any part does not start. The NATS nodes and Redis start in
// parallel, then the first broker, then the other brokers in parallel;
// each is waited for (NATS /healthz, the Redis log line, broker /readyz).
func Start(ctx context.Context, tb testing.TB, cfg Config) *Plane {
	tb.Helper()
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		tb.Fatal(err)
	}
	docker, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		tb.Fatalf("plane: docker client: %v", err)
	}
	tb.Cleanup(func() { _ = docker.Close() })
	if err := Prune(ctx, docker); err != nil {
		tb.Logf("plane: removing what an earlier run left behind: %v", err)
	}

	p := &Plane{cfg: cfg, run: randomID(), docker: docker}
	host, _ := os.Hostname()
	p.labels = map[string]string{labelPlane: p.run, labelPID: strconv.Itoa(os.Getpid()), labelHost: host}

	if p.NATSNet, err = p.newNetwork(ctx, tb, "nats-net"); err != nil {
		tb.Fatal(err)
	}
	if p.RedisNet, err = p.newNetwork(ctx, tb, "redis-net"); err != nil {
		tb.Fatal(err)
	}
	p.NATS = make([]*Node, cfg.NATSNodes)
	steps := make([]func() error, 0, cfg.NATSNodes+1)
	for i := range p.NATS {
		steps = append(steps, func() error {
			n, err := p.startNATS(ctx, tb, i+1)
			p.NATS[i] = n
			return err
		})
	}
	steps = append(steps, func() error {
		n, err := p.startRedis(ctx, tb)
		p.Redis = n
		return err
	})
	if err := parallel(steps...); err != nil {
		tb.Fatalf("plane: %v", err)
	}

	// The first broker creates the audit stream (replicated on the whole
	// cluster) alone; the others, started together, find it.
	p.Brokers = make([]*Node, cfg.Brokers)
	if p.Brokers[0], err = p.startBroker(ctx, tb, 1); err != nil {
		tb.Fatalf("plane: %v", err)
	}
	steps = steps[:0]
	for i := range p.Brokers[1:] {
		i := i + 1
		steps = append(steps, func() error {
			n, err := p.startBroker(ctx, tb, i+1)
			p.Brokers[i] = n
			return err
		})
	}
	if err := parallel(steps...); err != nil {
		tb.Fatalf("plane: %v", err)
	}
	return p
}

func (p *Plane) newNetwork(ctx context.Context, tb testing.TB, name string) (*testcontainers.DockerNetwork, error) {
	nw, err := network.New(ctx, network.WithLabels(p.labels), network.WithLabels(map[string]string{labelPlane + ".network": name}))
	testcontainers.CleanupNetwork(tb, nw)
	if err != nil {
		return nil, fmt.Errorf("plane: network %s: %w", name, err)
	}
	return nw, nil
}

// runContainer starts one container, named name on nets, and registers
// its removal (with its last log lines when the test failed). httpPort is
// the container port of its HTTP listener ("" for none).
func (p *Plane) runContainer(ctx context.Context, tb testing.TB, name, image, httpPort string, nets []*testcontainers.DockerNetwork, opts ...testcontainers.ContainerCustomizer) (*Node, error) {
	all := []testcontainers.ContainerCustomizer{
		testcontainers.WithName("signoff-it-" + p.run + "-" + name),
		testcontainers.WithLabels(p.labels),
	}
	for _, nw := range nets {
		all = append(all, network.WithNetwork([]string{name}, nw))
	}
	all = append(all, opts...)
	c, err := testcontainers.Run(ctx, image, all...)
	n := &Node{Name: name, Container: c, plane: p, httpPort: httpPort}
	if c != nil {
		tb.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if tb.Failed() {
				tb.Logf("--- last log lines of %s ---\n%s", name, n.Logs(cctx, 40))
				if errs := n.Errors(cctx, 40); errs != "" {
					tb.Logf("--- last errors and warnings of %s ---\n%s", name, errs)
				}
			}
			if err := testcontainers.TerminateContainer(c, testcontainers.StopContext(cctx), testcontainers.StopTimeout(time.Second)); err != nil {
				tb.Logf("plane: remove %s: %v", name, err)
			}
		})
	}
	if err != nil {
		if c != nil {
			return n, fmt.Errorf("%s (%s): %w\nlast log lines:\n%s", name, image, err, n.Logs(context.Background(), 30))
		}
		return n, fmt.Errorf("%s (%s): %w", name, image, err)
	}
	return n, nil
}

// dataVolume puts the container's /data on a volume of its own, as every
// shipped deployment does (the compose file's named volumes, the chart's
// persistent volume claims), rather than on the container's own writable
// layer. The layer is the storage driver's — fuse-overlayfs on some Docker
// hosts, where every fsync goes through a FUSE daemon that competes with
// the build for the CPU: Redis syncs its append-only file before each
// reply, and a stall there held reads past the brokers' store timeout in a
// scenario that touched only NATS. The volume is anonymous: it survives a
// kill and a start of its container, and goes when the container is
// removed.
func dataVolume() testcontainers.CustomizeRequestOption {
	return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Target: "/data"})
	})
}

// pinPorts publishes each container port on a host port chosen now, rather
// than one Docker picks at each start: a container that is stopped (or
// killed, or restarted by its restart policy) and started again is found at
// the same address, by the clients of the test process and by the wait
// strategies, which look the port up only once.
func pinPorts(ports ...string) (testcontainers.CustomizeRequestOption, error) {
	bindings := mobynet.PortMap{}
	for _, port := range ports {
		hostPort, err := freePort()
		if err != nil {
			return nil, err
		}
		bindings[mobynet.MustParsePort(port)] = []mobynet.PortBinding{{HostPort: strconv.Itoa(hostPort)}}
	}
	return func(req *testcontainers.GenericContainerRequest) error {
		req.ExposedPorts = append(req.ExposedPorts, ports...)
		return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			if hc.PortBindings == nil {
				hc.PortBindings = mobynet.PortMap{}
			}
			maps.Copy(hc.PortBindings, bindings)
		})(req)
	}, nil
}

func (p *Plane) natsRoutes() string {
	routes := make([]string, p.cfg.NATSNodes)
	for i := range routes {
		routes[i] = fmt.Sprintf("nats://nats-%d:6222", i+1)
	}
	return strings.Join(routes, ",")
}

func (p *Plane) natsClientURLs() string {
	urls := make([]string, p.cfg.NATSNodes)
	for i := range urls {
		urls[i] = fmt.Sprintf("nats://nats-%d:4222", i+1)
	}
	return strings.Join(urls, ",")
}

func (p *Plane) startNATS(ctx context.Context, tb testing.TB, i int) (*Node, error) {
	name := fmt.Sprintf("nats-%d", i)
	pin, err := pinPorts(natsClientPort, natsMonitorPort)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	args := []string{
		"--name", name,
		"--jetstream", "--store_dir", "/data/jetstream",
		"--http_port", "8222",
		// The nodes' addresses on the Docker network mean nothing to the
		// test process: clients use the list they were given.
		"--no_advertise",
	}
	if p.cfg.NATSNodes > 1 {
		args = append(args, "--cluster_name", "signoff", "--cluster", "nats://0.0.0.0:6222", "--routes", p.natsRoutes())
	}
	n, err := p.runContainer(ctx, tb, name, p.cfg.Images.NATS, natsMonitorPort, []*testcontainers.DockerNetwork{p.NATSNet},
		testcontainers.WithCmd(args...),
		pin,
		dataVolume(),
		// /healthz answers 200 once the node serves clients and its
		// JetStream is current with the cluster.
		testcontainers.WithWaitStrategyAndDeadline(p.cfg.StartTimeout, wait.ForHTTP("/healthz").WithPort(natsMonitorPort).
			WithStartupTimeout(p.cfg.StartTimeout).WithPollInterval(200*time.Millisecond)),
	)
	if err != nil {
		return n, err
	}
	if n.clientEndpoint, err = n.Endpoint(ctx, natsClientPort); err != nil {
		return n, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

func (p *Plane) startRedis(ctx context.Context, tb testing.TB) (*Node, error) {
	// Pinned, so that a test talking to Redis finds it after a restart.
	pin, err := pinPorts(redisPort)
	if err != nil {
		return nil, err
	}
	return p.runContainer(ctx, tb, "redis", p.cfg.Images.Redis, "", []*testcontainers.DockerNetwork{p.RedisNet},
		testcontainers.WithCmd(p.cfg.RedisArgs...),
		pin,
		dataVolume(),
		testcontainers.WithWaitStrategyAndDeadline(p.cfg.StartTimeout, wait.ForLog("Ready to accept connections").WithStartupTimeout(p.cfg.StartTimeout)),
	)
}

// BrokerName is the replica name (--replica) and host name of broker i
// (1-based).
func BrokerName(i int) string { return fmt.Sprintf("broker-%d", i) }

func (p *Plane) startBroker(ctx context.Context, tb testing.TB, i int) (*Node, error) {
	name := BrokerName(i)
	args := []string{
		"--nats", p.natsClientURLs(),
		"--redis", "redis://redis:6379/0",
		"--policy", PolicyPath,
		"--http", "0.0.0.0:8080",
		"--replica", name,
		"--audit-replicas", strconv.Itoa(min(3, p.cfg.NATSNodes)),
		// The plane's NATS has no authorization (deploy/compose's does).
		"--insecure-nats",
	}
	args = append(args, p.cfg.BrokerArgs...)
	pin, err := pinPorts(brokerHTTPPort)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p.runContainer(ctx, tb, name, p.cfg.Images.Broker, brokerHTTPPort, []*testcontainers.DockerNetwork{p.NATSNet, p.RedisNet},
		testcontainers.WithCmd(args...),
		pin,
		testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader:            strings.NewReader(string(p.cfg.Policy)),
			ContainerFilePath: PolicyPath,
			FileMode:          0o644,
		}),
		// A broker that exits (it could not create the audit stream while
		// the cluster was still electing) is started again, as an
		// orchestrator would. Docker does not restart containers stopped
		// or killed on purpose, so the faults the suite injects stick.
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyOnFailure, MaximumRetryCount: 5}
		}),
		testcontainers.WithWaitStrategyAndDeadline(p.cfg.StartTimeout, wait.ForHTTP("/readyz").WithPort(brokerHTTPPort).
			WithStartupTimeout(p.cfg.StartTimeout).WithPollInterval(200*time.Millisecond)),
	)
}

// ApproverBotConfig builds an approver bot config file around body (the
// approvers, web, … sections), pointing the bot at NATS node natsNode
// (1-based) and its HTTP listener at the port the plane maps.
func ApproverBotConfig(natsNode int, body string) []byte {
	return fmt.Appendf(nil, "nats:\n  url: nats://nats-%d:4222\n  name: approver-bot\n  insecure: true\nhttp:\n  listen: 0.0.0.0:8090\n%s", natsNode, body)
}

// ApproverBotConfigPath is where StartApproverBot copies the config file.
const ApproverBotConfigPath = "/etc/signoff/approver-bot.yaml"

// StartApproverBot starts an approver bot named name on nats-net with the
// config file config (see ApproverBotConfig), waits for its /readyz and
// registers its removal with tb.Cleanup. It may be called from any
// goroutine.
func (p *Plane) StartApproverBot(ctx context.Context, tb testing.TB, name string, config []byte) (*Node, error) {
	pin, err := pinPorts(botHTTPPort)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	n, err := p.runContainer(ctx, tb, name, p.cfg.Images.ApproverBot, botHTTPPort, []*testcontainers.DockerNetwork{p.NATSNet},
		testcontainers.WithCmd("--config", ApproverBotConfigPath),
		pin,
		testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader:            strings.NewReader(string(config)),
			ContainerFilePath: ApproverBotConfigPath,
			FileMode:          0o644,
		}),
		testcontainers.WithWaitStrategyAndDeadline(p.cfg.StartTimeout, wait.ForHTTP("/readyz").WithPort(botHTTPPort).
			WithStartupTimeout(p.cfg.StartTimeout).WithPollInterval(200*time.Millisecond)),
	)
	if err != nil {
		return nil, fmt.Errorf("plane: %w", err)
	}
	return n, nil
}

// NATSURLs returns the client URLs of every NATS node as the test process
// reaches them (the pinned host ports).
func (p *Plane) NATSURLs() []string {
	urls := make([]string, len(p.NATS))
	for i, n := range p.NATS {
		urls[i] = n.ClientURL()
	}
	return urls
}

// Connect connects to the NATS cluster through every node (in random
// order, so many connections spread over the nodes) and reconnects without
// end; the connection is closed in tb.Cleanup.
func (p *Plane) Connect(tb testing.TB, name string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	return p.connect(tb, strings.Join(p.NATSURLs(), ","), name, opts...)
}

// ConnectVia connects through NATS node i (1-based) first, and to the other
// nodes when that one is away.
func (p *Plane) ConnectVia(tb testing.TB, i int, name string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	urls := p.NATSURLs()
	ordered := append([]string{urls[i-1]}, append(append([]string{}, urls[:i-1]...), urls[i:]...)...)
	return p.connect(tb, strings.Join(ordered, ","), name, append([]nats.Option{nats.DontRandomize()}, opts...)...)
}

func (p *Plane) connect(tb testing.TB, urls, name string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	all := append([]nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.ReconnectJitter(50*time.Millisecond, 50*time.Millisecond),
		nats.Timeout(2 * time.Second),
		nats.PingInterval(time.Second),
		nats.MaxPingsOutstanding(2),
	}, opts...)
	nc, err := nats.Connect(urls, all...)
	if err != nil {
		tb.Fatalf("plane: connect %s to %s: %v", name, urls, err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// WaitReady waits until every broker's /readyz and every NATS node's
// /healthz answer 200 (a fault was repaired), or ctx ends; the error lists
// what was still not ready.
func (p *Plane) WaitReady(ctx context.Context) error {
	for {
		var problems []string
		for _, n := range p.NATS {
			if code, body, err := n.Get(ctx, n.httpPort, "/healthz"); err != nil || code != 200 {
				problems = append(problems, fmt.Sprintf("%s /healthz: %d %s %v", n.Name, code, strings.TrimSpace(body), err))
			}
		}
		for _, b := range p.Brokers {
			if code, body, err := b.Readyz(ctx); err != nil || code != 200 {
				problems = append(problems, fmt.Sprintf("%s /readyz: %d %s %v", b.Name, code, strings.TrimSpace(body), err))
			}
		}
		if len(problems) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("plane not ready: %s", strings.Join(problems, "; "))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// parallel runs steps at once and joins their errors.
func parallel(steps ...func() error) error {
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Go(func() { errs[i] = step() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
