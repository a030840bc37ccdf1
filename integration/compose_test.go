package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/internal/approverbot/web/webtest"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The demo approver of deploy/compose/approver-bot.yaml.
const (
	composeApprover = "alice"
	composePassword = "signoff-demo"
)

// TestComposeDemoApprovesADeployThroughTheWebPage brings up the demo plane
// of deploy/compose exactly as a user would (3 NATS nodes with JetStream and
// the tenant accounts, Redis with AOF, 3 brokers, the approver bot, each
// with its own nkey), sends one request as the DEMO agent that
// the compose policy asks about, answers it as alice through the web page's
// HTTP API, and checks that the agent got allow decided by alice, and that
// the audit stream holds the decision on 3 replicas. Everything it started
// is removed with `down -v`, also on failure.
func TestComposeDemoApprovesADeployThroughTheWebPage(t *testing.T) {
	images := requireImages(t)
	cp := newComposeProject(t, images.Broker, images.ApproverBot, images.NATS, images.Redis)
	// Generous: docker-compose v1 is slow on a loaded machine; a plane
	// that works comes up in well under a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()

	start := time.Now()
	cp.up(ctx, t)
	upTook := time.Since(start)
	for _, b := range []string{"broker-1", "broker-2", "broker-3"} {
		cp.waitReady(ctx, t, b, 8080)
	}
	web := "http://" + cp.waitReady(ctx, t, "approver-bot", 8090)
	natsURL := "nats://" + cp.port(ctx, t, "nats-1", 4222)
	cp.waitHealthy(ctx, t, "nats-1", "nats-2", "nats-3", "redis", "broker-1", "broker-2", "broker-3", "approver-bot")
	t.Logf("compose plane %s: up in %s, ready and healthy in %s", cp.project, upTook.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))

	// The DEMO tenant's agent, with its own key and inbox (deploy/nats/
	// tenant-demo.conf); the tenants file maps that key to demo-agent.
	nc := cp.connect(t, natsURL, "demo-agent", "_INBOX.agent")
	// Without a key the plane lets nobody in.
	if anon, err := nats.Connect(natsURL, nats.Name("compose-test-anonymous")); err == nil {
		anon.Close()
		t.Errorf("a client without a key connected to the compose plane's NATS")
	}
	session := "compose-" + strings.ToLower(nuid.Next())
	agent, err := client.New(nc, client.WithSession(session), client.WithAgent("demo-agent"), client.WithRequestedBy("bob"))
	if err != nil {
		t.Fatal(err)
	}
	id := nuid.Next()
	type result struct {
		d   *messages.Decision
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := agent.Request(ctx, client.Call{RequestID: id, Tool: "bash", Arguments: map[string]string{"command": "make deploy"}})
		done <- result{d, err}
	}()

	w := composeSignIn(ctx, t, web, composeApprover, composePassword)
	q := w.waitQuestion(ctx, t, id)
	if q.Question.Request.Tool != "bash" || !strings.Contains(q.Question.Risk.Reason, "deploys need a human") {
		t.Errorf("question %+v: want bash asked by the compose policy's deploy rule", q.Question.Risk)
	}
	var rep struct {
		Applied bool           `json:"applied"`
		State   messages.State `json:"state"`
	}
	if err := w.Do(ctx, http.MethodPost, "/api/respond", map[string]string{"request_id": id, "action": "approve"}, &rep); err != nil {
		t.Fatalf("alice approves on the web page: %v", err)
	}
	if !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("respond reply %+v, want applied and approved", rep)
	}

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the agent got no decision after alice approved")
	}
	if r.err != nil {
		t.Fatalf("agent request: %v", r.err)
	}
	d := r.d
	if d.Outcome != messages.OutcomeAllow || d.ReasonCode != messages.ReasonApproved ||
		d.DecidedBy.ID != composeApprover || d.DecidedBy.Channel != "web" {
		t.Errorf("decision %s/%s by %+v, want allow/approved by alice on the web channel", d.Outcome, d.ReasonCode, d.DecidedBy)
	}

	// The audit stream is read by the plane's operator (SIGNOFF's admin).
	composeCheckAudit(ctx, t, cp.connect(t, natsURL, "admin", "_INBOX.admin"), session, id)
	composeDemoAgent(ctx, t, natsURL, filepath.Join(cp.keys, "demo-agent.nk"), w)
}

// composeDemoAgent runs the demo agent (examples/agent) against the compose
// plane, as docs/OPERATIONS.md shows: its rm call must put a question on the
// web page (the compose policy asks for it), which alice approves.
func composeDemoAgent(ctx context.Context, t *testing.T, natsURL, seed string, w *composeWeb) {
	t.Helper()
	out := &testenv.LogBuffer{}
	agent := exec.CommandContext(ctx, "go", "run", "./examples/agent", "-nats", natsURL, "-nats-nkey", seed, "-session", "compose-demo-"+strings.ToLower(nuid.Next()[18:]))
	agent.Dir = ".."
	agent.Stdout, agent.Stderr = out, out
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- agent.Wait() }()
	var id string
	for id == "" {
		var list struct {
			Questions []composeQuestion `json:"questions"`
		}
		if err := w.Do(ctx, http.MethodGet, "/api/questions", nil, &list); err != nil {
			t.Fatalf("list questions: %v", err)
		}
		for _, q := range list.Questions {
			if strings.Contains(string(q.Question.Request.Arguments), "rm -rf build") {
				id = q.RequestID
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the demo agent exited (%v) without a question on the web page:\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("the demo agent's rm call never reached the web page:\n%s", out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	var rep struct {
		Applied bool `json:"applied"`
	}
	if err := w.Do(ctx, http.MethodPost, "/api/respond", map[string]string{"request_id": id, "action": "approve"}, &rep); err != nil || !rep.Applied {
		t.Fatalf("alice approves the demo agent's call: %v %+v", err, rep)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "✓ bash allowed (approved") {
			t.Errorf("demo agent: %v\n%s", err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("the demo agent did not finish after the approval:\n%s", out.String())
	}
}

// composeCheckAudit checks that the audit stream is replicated on the three
// nodes (--audit-replicas 3) and holds the approval of request id.
func composeCheckAudit(ctx context.Context, t *testing.T, nc *nats.Conn, session, id string) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, messages.AuditStream)
	if err != nil {
		t.Fatalf("audit stream: %v", err)
	}
	if n := stream.CachedInfo().Config.Replicas; n != 3 {
		t.Errorf("audit stream has %d replicas, want 3", n)
	}
	// A tenant's records are under signoff.v1.t.<account>.audit (the
	// tenancy design in docs/PROTOCOL.md).
	subject := messages.DefaultPrefix + ".t.DEMO.audit." + session
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := stream.GetLastMsgForSubject(ctx, subject)
		if err == nil {
			recs, err := messages.AuditRecords(m.Data)
			if err != nil || len(recs) == 0 {
				t.Fatalf("audit record: %v (%d records)", err, len(recs))
			}
			if rec := recs[len(recs)-1]; rec.Decision.RequestID != id || rec.Decision.DecidedBy.ID != composeApprover {
				t.Errorf("audit record %+v, want request %s decided by alice", rec.Decision, id)
			}
			return
		}
		if !errors.Is(err, jetstream.ErrMsgNotFound) || time.Now().After(deadline) {
			t.Fatalf("audit record of %s: %v", subject, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// composeProject is one run of deploy/compose under a project name of its
// own, so runs never share containers, networks or volumes.
type composeProject struct {
	cmd     []string // docker compose, or docker-compose
	dir     string
	project string
	env     []string
	keys    string // the plane's nkeys (make keys), SIGNOFF_COMPOSE_KEYS
}

// connect connects to the plane's NATS as the user whose seed is
// keys/<user>.nk, with its inbox prefix.
func (cp *composeProject) connect(t *testing.T, natsURL, user, inbox string) *nats.Conn {
	t.Helper()
	key, err := nats.NkeyOptionFromSeed(filepath.Join(cp.keys, user+".nk"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(natsURL, key, nats.CustomInboxPrefix(inbox), nats.Name("compose-test-"+user), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("connect to the published NATS port %s as %s: %v", natsURL, user, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// newComposeProject finds the compose tool (a missing one fails under CI,
// skips otherwise) and registers the project's removal with t.Cleanup.
func newComposeProject(t *testing.T, broker, bot, natsImage, redisImage string) *composeProject {
	t.Helper()
	cmd, err := composeTool()
	if err != nil {
		msg := "Docker Compose is not installed (" + err.Error() + "): install the compose plugin or docker-compose"
		if suite.ci {
			t.Fatal(msg)
		}
		t.Skip("*** SKIPPED: " + msg + ". With CI=true this fails. ***")
	}
	dir, err := filepath.Abs(filepath.Join("..", "deploy", "compose"))
	if err != nil {
		t.Fatal(err)
	}
	// The keys, as `make keys` makes them, in a directory of the test's.
	keys := t.TempDir()
	gen := exec.Command("go", "run", "./deploy/nats/genkeys", "-dir", keys, "-readable")
	gen.Dir = ".."
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("genkeys: %v\n%s", err, out)
	}
	cp := &composeProject{
		cmd:     cmd,
		dir:     dir,
		keys:    keys,
		project: fmt.Sprintf("%s%d-%s", composePrefix, os.Getpid(), strings.ToLower(nuid.Next()[16:])),
		env: append(os.Environ(),
			"SIGNOFF_COMPOSE_KEYS="+keys,
			"SIGNOFF_IMAGE_BROKER="+broker,
			"SIGNOFF_IMAGE_APPROVER_BOT="+bot,
			"SIGNOFF_IMAGE_NATS="+natsImage,
			"SIGNOFF_IMAGE_REDIS="+redisImage,
			// Empty: publish on free ports, found with `port`.
			"SIGNOFF_COMPOSE_NATS_PORT=",
			"SIGNOFF_COMPOSE_WEB_PORT=",
			"SIGNOFF_COMPOSE_BROKER_1_PORT=",
			"SIGNOFF_COMPOSE_BROKER_2_PORT=",
			"SIGNOFF_COMPOSE_BROKER_3_PORT=",
		),
	}
	cp.pruneOrphans(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if t.Failed() {
			out, _ := cp.run(ctx, "logs", "--no-color", "--tail", "40")
			t.Logf("compose logs of %s:\n%s", cp.project, out)
		}
		if out, err := cp.run(ctx, "down", "-v", "--remove-orphans", "-t", "2"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	return cp
}

// composePrefix starts the name of every compose project of the suite,
// followed by the test process's pid.
const composePrefix = "signoff-compose-"

// pruneOrphans takes down the compose projects of earlier runs whose test
// process is gone (a run killed by its -timeout never gets to its Cleanup).
// Projects of running test processes are left alone.
func (cp *composeProject) pruneOrphans(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "ps", "-a", "--filter", "label=com.docker.compose.project",
		"--format", `{{.Label "com.docker.compose.project"}}`).Output()
	if err != nil {
		t.Logf("list compose projects: %v", err)
		return
	}
	seen := map[string]bool{}
	for _, name := range strings.Fields(string(out)) {
		pidStr, _, ok := strings.Cut(strings.TrimPrefix(name, composePrefix), "-")
		if seen[name] || !strings.HasPrefix(name, composePrefix) || !ok {
			continue
		}
		seen[name] = true
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		orphan := *cp
		orphan.project = name
		if out, err := orphan.run(ctx, "down", "-v", "--remove-orphans", "-t", "1"); err != nil {
			t.Logf("take down the orphaned compose project %s: %v\n%s", name, err, out)
		} else {
			t.Logf("took down the orphaned compose project %s", name)
		}
	}
}

// composeTool returns the compose command line: the Docker CLI plugin
// (`docker compose`), else the standalone docker-compose (1.29 and 2.x).
func composeTool() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var errs []error
	for _, c := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		out, err := exec.CommandContext(ctx, c[0], append(c[1:], "version")...).CombinedOutput()
		if err == nil {
			return c, nil
		}
		errs = append(errs, fmt.Errorf("%s: %v %s", strings.Join(c, " "), err, bytes.TrimSpace(out)))
	}
	return nil, errors.Join(errs...)
}

func (cp *composeProject) run(ctx context.Context, args ...string) (string, error) {
	full := append(append(cp.cmd[1:len(cp.cmd):len(cp.cmd)], "-p", cp.project, "-f", "docker-compose.yml"), args...)
	c := exec.CommandContext(ctx, cp.cmd[0], full...)
	c.Dir, c.Env = cp.dir, cp.env
	out, err := c.CombinedOutput()
	return string(out), err
}

// up starts the project. Readiness is checked by the caller on /readyz,
// health with waitHealthy.
func (cp *composeProject) up(ctx context.Context, t *testing.T) {
	t.Helper()
	if out, err := cp.run(ctx, "up", "-d", "--no-build"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
}

// port returns the host address ("127.0.0.1:N") that service's port is
// published on.
func (cp *composeProject) port(ctx context.Context, t *testing.T, service string, port int) string {
	t.Helper()
	addr, err := cp.published(ctx, service, port)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func (cp *composeProject) published(ctx context.Context, service string, port int) (string, error) {
	out, err := cp.run(ctx, "port", service, fmt.Sprint(port))
	addr := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		return "", fmt.Errorf("compose port %s %d: %v %q", service, port, err, addr)
	}
	return addr, nil
}

// waitReady polls service's /readyz on its published port until it
// answers 200, and returns the address. The port is looked up on every
// try: a broker that exits at start (the JetStream cluster is still
// electing its leader) is started again by its restart policy, and Docker
// then publishes it on another free port.
func (cp *composeProject) waitReady(ctx context.Context, t *testing.T, service string, port int) string {
	t.Helper()
	hc := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		addr, err := cp.published(ctx, service, port)
		if err == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
			resp, herr := hc.Do(req)
			if herr == nil {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return addr
				}
				herr = fmt.Errorf("%s/readyz: %d %s", addr, resp.StatusCode, bytes.TrimSpace(body))
			}
			err = herr
		}
		last = err
		select {
		case <-ctx.Done():
			ps, _ := cp.run(context.Background(), "ps")
			t.Fatalf("%s never became ready (last: %v)\n%s", service, last, ps)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitHealthy waits until Docker reports every service's container
// healthy: each has a healthcheck (the images are FROM scratch, so each
// probes with a binary of its own), and none reports "none" or
// "unhealthy" for good.
func (cp *composeProject) waitHealthy(ctx context.Context, t *testing.T, services ...string) {
	t.Helper()
	status := map[string]string{}
	for {
		healthy := 0
		for _, svc := range services {
			out, err := cp.run(ctx, "ps", "-q", svc)
			id := strings.TrimSpace(out)
			if err != nil || id == "" {
				status[svc] = fmt.Sprintf("no container (%v)", err)
				continue
			}
			h, err := exec.CommandContext(ctx, "docker", "inspect", "--format", "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}", id).Output()
			if err != nil {
				status[svc] = err.Error()
				continue
			}
			status[svc] = strings.TrimSpace(string(h))
			if status[svc] == "none" {
				t.Fatalf("%s has no healthcheck", svc)
			}
			if status[svc] == "healthy" {
				healthy++
			}
		}
		if healthy == len(services) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("not every container became healthy: %v", status)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// composeWeb is a browser signed in to the bot's web page.
type composeWeb struct{ *webtest.Client }

func composeSignIn(ctx context.Context, t *testing.T, base, approver, password string) *composeWeb {
	t.Helper()
	w := &composeWeb{webtest.New(base)}
	if err := w.Login(ctx, approver, password); err != nil {
		t.Fatalf("%s signs in: %v", approver, err)
	}
	if w.CSRF == "" {
		t.Fatalf("%s signed in without a CSRF token", approver)
	}
	return w
}

// composeQuestion is the part of a GET /api/questions entry the test reads.
type composeQuestion struct {
	RequestID string                  `json:"request_id"`
	Question  messages.ApprovalNeeded `json:"question"`
}

// waitQuestion polls GET /api/questions until request id is listed.
func (w *composeWeb) waitQuestion(ctx context.Context, t *testing.T, id string) composeQuestion {
	t.Helper()
	for {
		var list struct {
			Questions []composeQuestion `json:"questions"`
		}
		if err := w.Do(ctx, http.MethodGet, "/api/questions", nil, &list); err != nil {
			t.Fatalf("list questions: %v", err)
		}
		for _, q := range list.Questions {
			if q.RequestID == id {
				return q
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the web page never listed question %s", id)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
