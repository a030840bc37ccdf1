package plane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Node is one container of a plane: a NATS node, Redis, a broker or an
// approver bot. Its fault methods act through the Docker engine, as an
// operator (or an outage) would.
type Node struct {
	// Name is the node's host name on the plane's networks (nats-1,
	// redis, broker-2); for brokers also the replica name.
	Name string
	// Container is the container; nil when it could not be created.
	Container *testcontainers.DockerContainer

	plane          *Plane
	httpPort       string // the container port of its HTTP listener
	clientEndpoint string // NATS nodes: host:port of the client port

	mu        sync.Mutex
	endpoints map[string]string // container port → host:port
}

// ClientURL returns the NATS client URL of a NATS node as the test process
// reaches it.
func (n *Node) ClientURL() string { return "nats://" + n.clientEndpoint }

// Kill sends SIGKILL (docker kill) and waits until the container is no
// longer running: the process gets no chance to finish anything.
func (n *Node) Kill(ctx context.Context) error {
	if _, err := n.plane.docker.ContainerKill(ctx, n.Container.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill %s: %w", n.Name, err)
	}
	return n.waitState(ctx, false)
}

// Signal sends sig ("STOP", "CONT", …) to the container's main process
// (docker kill --signal): SIGSTOP freezes that one process, its
// connections open and silent, as a hung server.
func (n *Node) Signal(ctx context.Context, sig string) error {
	if _, err := n.plane.docker.ContainerKill(ctx, n.Container.GetContainerID(), client.ContainerKillOptions{Signal: sig}); err != nil {
		return fmt.Errorf("signal %s to %s: %w", sig, n.Name, err)
	}
	return nil
}

// Stop stops the container (SIGTERM, then SIGKILL after grace).
func (n *Node) Stop(ctx context.Context, grace time.Duration) error {
	if err := n.Container.Stop(ctx, &grace); err != nil {
		return fmt.Errorf("stop %s: %w", n.Name, err)
	}
	return nil
}

// Start starts a stopped or killed container again and waits until it is
// ready by the same check as at first start. Its file system (Redis's
// append-only file, JetStream's store) is the one it had.
func (n *Node) Start(ctx context.Context) error {
	if err := n.Container.Start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", n.Name, err)
	}
	return nil
}

// Pause freezes every process of the container (docker pause): its
// connections stay open but nothing answers.
func (n *Node) Pause(ctx context.Context) error {
	if _, err := n.plane.docker.ContainerPause(ctx, n.Container.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("pause %s: %w", n.Name, err)
	}
	return nil
}

// Unpause resumes a paused container.
func (n *Node) Unpause(ctx context.Context) error {
	if _, err := n.plane.docker.ContainerUnpause(ctx, n.Container.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("unpause %s: %w", n.Name, err)
	}
	return nil
}

// Disconnect takes the container off nw (docker network disconnect): its
// connections to the hosts on nw break and their names stop resolving.
func (n *Node) Disconnect(ctx context.Context, nw *testcontainers.DockerNetwork) error {
	if _, err := n.plane.docker.NetworkDisconnect(ctx, nw.ID, client.NetworkDisconnectOptions{Container: n.Container.GetContainerID(), Force: true}); err != nil {
		return fmt.Errorf("disconnect %s from %s: %w", n.Name, nw.Name, err)
	}
	return nil
}

// Connect puts the container back on nw under its name.
func (n *Node) Connect(ctx context.Context, nw *testcontainers.DockerNetwork) error {
	_, err := n.plane.docker.NetworkConnect(ctx, nw.ID, client.NetworkConnectOptions{
		Container:      n.Container.GetContainerID(),
		EndpointConfig: &mobynet.EndpointSettings{Aliases: []string{n.Name}},
	})
	if err != nil {
		return fmt.Errorf("connect %s to %s: %w", n.Name, nw.Name, err)
	}
	return nil
}

// Running reports whether the container runs (and is not paused).
func (n *Node) Running(ctx context.Context) (bool, error) {
	st, err := n.Container.State(ctx)
	if err != nil {
		return false, err
	}
	return st.Running && !st.Paused, nil
}

func (n *Node) waitState(ctx context.Context, running bool) error {
	for {
		st, err := n.Container.State(ctx)
		if err != nil {
			return fmt.Errorf("%s: inspect: %w", n.Name, err)
		}
		if st.Running == running {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: still running=%v: %w", n.Name, st.Running, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Endpoint returns host:port where the test process reaches port (such as
// "8080/tcp") of the container. The plane pins its host ports, so the
// answer holds across restarts and is kept.
func (n *Node) Endpoint(ctx context.Context, port string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ep, ok := n.endpoints[port]; ok {
		return ep, nil
	}
	ep, err := n.Container.PortEndpoint(ctx, port, "")
	if err != nil {
		return "", fmt.Errorf("%s: port %s: %w", n.Name, port, err)
	}
	if n.endpoints == nil {
		n.endpoints = map[string]string{}
	}
	n.endpoints[port] = ep
	return ep, nil
}

// URL returns http://host:port of the container's port.
func (n *Node) URL(ctx context.Context, port string) (string, error) {
	ep, err := n.Endpoint(ctx, port)
	if err != nil {
		return "", err
	}
	return "http://" + ep, nil
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// Get fetches path from the container's HTTP port and returns the status
// and body.
func (n *Node) Get(ctx context.Context, port, path string) (int, string, error) {
	base, err := n.URL(ctx, port)
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(body), nil
}

// Readyz fetches /readyz (brokers, approver bots).
func (n *Node) Readyz(ctx context.Context) (int, string, error) {
	return n.Get(ctx, n.httpPort, "/readyz")
}

// HTTPURL returns the base URL of the node's HTTP listener: a broker's
// /healthz, /readyz and /metrics, an approver bot's web page, a NATS
// node's monitoring endpoint.
func (n *Node) HTTPURL(ctx context.Context) (string, error) {
	return n.URL(ctx, n.httpPort)
}

// Logs returns the last lines of the container's output, or why it
// cannot.
func (n *Node) Logs(ctx context.Context, lines int) string {
	all, err := n.LogLines(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)", err)
	}
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// Errors returns the last n lines the container logged as errors or
// warnings (slog's level=ERROR and level=WARN, nats-server's [ERR] and
// [WRN]), which the last lines of a busy broker's log have often scrolled
// past by the time a test fails.
func (n *Node) Errors(ctx context.Context, lines int) string {
	all, err := n.LogLines(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)", err)
	}
	var bad []string
	for _, l := range all {
		if strings.Contains(l, " level=ERROR ") || strings.Contains(l, " level=WARN ") ||
			strings.Contains(l, "[ERR]") || strings.Contains(l, "[WRN]") {
			bad = append(bad, l)
		}
	}
	return strings.Join(bad[max(0, len(bad)-lines):], "\n")
}

// LogLines returns every line the container wrote (stdout and stderr),
// across its restarts; the logs of a killed container remain readable.
func (n *Node) LogLines(ctx context.Context) ([]string, error) {
	if n.Container == nil {
		return nil, fmt.Errorf("%s: no container", n.Name)
	}
	rc, err := n.Container.Logs(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: logs: %w", n.Name, err)
	}
	defer rc.Close()
	var lines []string
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}
