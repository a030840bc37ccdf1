package broker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// The tenant suite: a 3-node NATS cluster with the brokers' account and
// two tenant accounts (testenv.Accounts), two plane replicas on different
// nodes sharing one redis-server, and agents and bots of both tenants
// using the same session ids and agent ids on purpose.

const tenantPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(ls)", action: allow }
  - { rule: "bash(ls *)", action: allow }
teams:
  default: { members: [alice, bob] }
`

const tenantsFile = `
tenants:
  - id: acme
    account: ACME
    agents:
      - {user: acme-agent, agent_id: coder, agent_types: [claude-code], sessions: ["shared-*", "acme-*"]}
      - {user: acme-deployer, agent_id: deployer, sessions: ["deploy-*"]}
      - {user: acme-raw, agent_id: raw, sessions: ["*"]}
    bots: [{user: acme-bot}]
    admins: [{user: acme-admin}]
  - id: globex
    account: GLOBEX
    agents:
      - {user: globex-agent, agent_id: coder, sessions: ["*"]}
    bots: [{user: globex-bot}]
`

var tenantUsers = map[string][]testenv.AccountUser{
	"ACME": {
		{Name: "acme-agent", Password: "pw", Role: testenv.RoleAgent},
		{Name: "acme-deployer", Password: "pw", Role: testenv.RoleAgent},
		{Name: "acme-raw", Password: "pw", Role: testenv.RoleAny},
		{Name: "acme-bot", Password: "pw", Role: testenv.RoleBot},
		{Name: "acme-admin", Password: "pw", Role: testenv.RoleAdmin},
	},
	"GLOBEX": {
		{Name: "globex-agent", Password: "pw", Role: testenv.RoleAgent},
		{Name: "globex-bot", Password: "pw", Role: testenv.RoleBot},
	},
}

type tenantPlane struct {
	t       *testing.T
	cluster *testenv.NATSCluster
	planes  []*broker.Plane
	warns   *testenv.LogBuffer // the planes' warnings
}

// startTenantPlane starts the cluster, Redis and two plane replicas
// serving the tenants file text.
func startTenantPlane(t *testing.T, file string) *tenantPlane {
	t.Helper()
	return startTenantPlaneIn(t, file, false)
}

// eachNATSMode runs f on a tenant plane whose NATS accounts come from a
// config file and, again, on one in operator mode (JWTs, a resolver),
// where accounts and users are named by their public keys: the tenants
// file names them so.
func eachNATSMode(t *testing.T, file string, f func(t *testing.T, tp *tenantPlane)) {
	for _, op := range []bool{false, true} {
		t.Run(map[bool]string{false: "config file", true: "operator, full resolver"}[op], func(t *testing.T) {
			f(t, startTenantPlaneIn(t, file, op))
		})
	}
}

// startTenantPlaneIn starts a tenant plane on NATS accounts from a config
// file or, with operator, from JWTs pushed to full resolvers; the accounts
// of deferred tenants (operator mode) are pushed only later, by the test.
func startTenantPlaneIn(t *testing.T, file string, operator bool, deferred ...string) *tenantPlane {
	t.Helper()
	c := testenv.NATSAccountsCluster(t, 3, testenv.Accounts{Tenants: tenantUsers, Operator: operator, FullResolver: operator, Deferred: deferred})
	file = c.KeyReplacer().Replace(file)
	rds := testenv.Redis(t)
	pol, err := policy.Parse([]byte(tenantPolicy), "tenant-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tenantPlane{t: t, cluster: c, warns: &testenv.LogBuffer{}}
	for i := range 2 {
		f, err := tenancy.Parse([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		nc := c.Connect(t, i, "broker", "broker")
		p, err := broker.NewPlane(broker.PlaneConfig{
			Base: broker.Config{
				Conn: nc, Replica: fmt.Sprintf("plane-%d", i),
				StoreTimeout: time.Second, ReapInterval: 100 * time.Millisecond, AuditReplicas: 3,
				Logger: slog.New(slog.NewTextHandler(tp.warns, &slog.HandlerOptions{Level: slog.LevelWarn})),
			},
			Tenants: f,
			Open: func(ctx context.Context, tn *tenancy.Tenant) (broker.TenantParts, error) {
				rs, err := redisstore.New(ctx, redisstore.Options{URL: rds.URL(), KeyPrefix: "signoff:t:" + tn.ID, OpTimeout: time.Second})
				if err != nil {
					return broker.TenantParts{}, err
				}
				return broker.TenantParts{Store: rs, Policy: broker.StaticPolicy{P: pol}, Close: func() { _ = rs.Close() }}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		brokertest.Run(t, fmt.Sprintf("plane-%d", i), p.Run)
		deadline := time.Now().Add(30 * time.Second)
		for p.Ready(context.Background()) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("plane %d not ready: %v", i, p.Ready(context.Background()))
			}
			time.Sleep(20 * time.Millisecond)
		}
		tp.planes = append(tp.planes, p)
	}
	return tp
}

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// conn connects as a tenant user to node i.
func (tp *tenantPlane) conn(i int, user string) *nats.Conn {
	return tp.cluster.Connect(tp.t, i, user, "pw")
}

func (tp *tenantPlane) agent(node int, user, session, agentID, agentType string) *client.Client {
	tp.t.Helper()
	opts := []client.Option{client.WithSession(session), client.WithAgent(agentID), client.WithAttemptTimeout(2 * time.Second)}
	if agentType != "" {
		opts = append(opts, client.WithAgentType(agentType))
	}
	c, err := client.New(tp.conn(node, user), opts...)
	if err != nil {
		tp.t.Fatal(err)
	}
	return c
}

// bot is an approver bot's connection watching the default team.
type bot struct {
	t    *testing.T
	nc   *nats.Conn
	asks chan messages.ApprovalNeeded
}

func (tp *tenantPlane) bot(node int, user string) *bot {
	tp.t.Helper()
	b := &bot{t: tp.t, nc: tp.conn(node, user), asks: make(chan messages.ApprovalNeeded, 64)}
	_, err := b.nc.Subscribe("signoff.v1.ask.default", func(m *nats.Msg) {
		var q messages.ApprovalNeeded
		if err := json.Unmarshal(m.Data, &q); err != nil {
			tp.t.Errorf("bad question: %v", err)
			return
		}
		b.asks <- q
	})
	if err != nil {
		tp.t.Fatal(err)
	}
	if err := b.nc.Flush(); err != nil {
		tp.t.Fatal(err)
	}
	return b
}

func (b *bot) next() messages.ApprovalNeeded {
	b.t.Helper()
	select {
	case q := <-b.asks:
		return q
	case <-time.After(10 * time.Second):
		b.t.Fatal("no question")
	}
	return messages.ApprovalNeeded{}
}

func (b *bot) none(d time.Duration) {
	b.t.Helper()
	select {
	case q := <-b.asks:
		b.t.Fatalf("unexpected question %s (%s)", q.Request.RequestID, q.Request.AgentID)
	case <-time.After(d):
	}
}

func (b *bot) respond(q messages.ApprovalNeeded, approve bool, scope messages.Scope, mode messages.RejectMode) messages.RespondReply {
	b.t.Helper()
	r := messages.Response{V: 1, RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "alice"}, Approved: approve, Scope: scope, RejectMode: mode, Digest: q.Digest}
	data, _ := json.Marshal(r)
	msg, err := b.nc.Request("signoff.v1.respond", data, 5*time.Second)
	if err != nil {
		b.t.Fatal(err)
	}
	var rep messages.RespondReply
	if err := json.Unmarshal(msg.Data, &rep); err != nil || strings.Contains(string(msg.Data), `"error"`) {
		b.t.Fatalf("respond: %s", msg.Data)
	}
	return rep
}

func TestTenantDecisionsQuestionsGrantsStopSignalsAndAuditNeverCross(t *testing.T) {
	eachNATSMode(t, tenantsFile, testTenantsNeverCross)
}

func testTenantsNeverCross(t *testing.T, tp *tenantPlane) {
	ctx := context.Background()
	acmeBot, globexBot := tp.bot(1, "acme-bot"), tp.bot(2, "globex-bot")
	// Same session id, same agent id, in both tenants.
	acme := tp.agent(2, "acme-agent", "shared-1", "coder", "claude-code")
	globex := tp.agent(0, "globex-agent", "shared-1", "coder", "")

	a1 := brokertest.Ask(ctx, acme, "acme-r1", "bash", brokertest.Bash("make deploy"))
	qa := acmeBot.next()
	g1 := brokertest.Ask(ctx, globex, "globex-r1", "bash", brokertest.Bash("make deploy"))
	qg := globexBot.next()
	if qa.Request.RequestID != "acme-r1" || qg.Request.RequestID != "globex-r1" {
		t.Fatalf("questions crossed: ACME's bot got %s, GLOBEX's %s", qa.Request.RequestID, qg.Request.RequestID)
	}
	if qa.Request.Identity != messages.IdentityVerified || qg.Request.Identity != messages.IdentityVerified {
		t.Errorf("question identity = %q / %q, want verified", qa.Request.Identity, qg.Request.Identity)
	}
	acmeBot.none(300 * time.Millisecond)
	globexBot.none(0)

	// ACME approves Always: ACME's agent is allowed; GLOBEX's, with the same
	// agent id and session, still waits.
	if rep := acmeBot.respond(qa, true, messages.ScopeAlways, ""); !rep.Applied {
		t.Fatalf("ACME's approval not applied: %+v", rep)
	}
	brokertest.WantDecision(t, a1.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	time.Sleep(300 * time.Millisecond)
	if d, err := g1.Peek(); d != nil || err != nil {
		t.Fatalf("GLOBEX's request was settled by ACME's approval: %+v %v", d, err)
	}
	d, err := acme.Request(ctx, client.Call{RequestID: "acme-r2", Tool: "bash", Arguments: brokertest.Bash("make deploy")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonScopeGrant)
	// ACME's Always grant does not reach GLOBEX's agent of the same id.
	g2 := brokertest.Ask(ctx, globex, "globex-r2", "bash", brokertest.Bash("make deploy"))
	if q := globexBot.next(); q.Request.RequestID != "globex-r2" {
		t.Fatalf("GLOBEX's bot got %s", q.Request.RequestID)
	}

	// GLOBEX rejects hard: its session stops; ACME's session of the same id
	// does not.
	if rep := globexBot.respond(qg, false, "", messages.RejectHard); !rep.Applied {
		t.Fatalf("GLOBEX's reject not applied: %+v", rep)
	}
	brokertest.WantDecision(t, g1.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	brokertest.WantDecision(t, g2.Wait(t), messages.OutcomeDeny, messages.ReasonHardStop)
	d, err = globex.Request(ctx, client.Call{RequestID: "globex-r3", Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonHardStop)
	d, err = acme.Request(ctx, client.Call{RequestID: "acme-r3", Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonPolicyAllow)
	acmeBot.none(200 * time.Millisecond)

	// Audit: each tenant's records on its own subjects, verified.
	tp.wantAudit(ctx, "ACME", "acme-")
	tp.wantAudit(ctx, "GLOBEX", "globex-")
}

// wantAudit checks every audit record of account's shared-1 session: the
// requests named with prefix are there, no other's, each verified.
func (tp *tenantPlane) wantAudit(ctx context.Context, account, prefix string) {
	t := tp.t
	t.Helper()
	js, err := jetstream.New(tp.cluster.Connect(t, 0, "broker", "broker"))
	if err != nil {
		t.Fatal(err)
	}
	subject := "signoff.v1.t." + tp.cluster.Key(account) + ".audit.shared-1"
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		cons, err := js.OrderedConsumer(ctx, messages.AuditStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
		if err != nil {
			t.Fatal(err)
		}
		seen = seen[:0]
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			recs, err := messages.AuditRecords(m.Data()) // grant events share the subject: none
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				if rec.Request.Identity != messages.IdentityVerified {
					t.Errorf("%s audit record %s: identity %q", account, rec.Request.RequestID, rec.Request.Identity)
				}
				seen = append(seen, rec.Request.RequestID)
			}
		}
		if len(seen) >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(seen) < 3 {
		t.Fatalf("%s: audit records %v, want at least 3", account, seen)
	}
	for _, id := range seen {
		if !strings.HasPrefix(id, prefix) {
			t.Errorf("%s's audit subject holds %s", account, id)
		}
	}
}

// rawRequest sends a request body as nc's user and returns the reply.
func rawRequest(t *testing.T, nc *nats.Conn, msg *nats.Msg) []byte {
	t.Helper()
	reply, err := nc.RequestMsg(msg, 5*time.Second)
	if err != nil {
		t.Fatalf("request %s: %v", msg.Subject, err)
	}
	return reply.Data
}

func requestMsg(session, id, agentID, agentType string) *nats.Msg {
	req := messages.Request{V: 1, RequestID: id, SessionID: session, AgentID: agentID, AgentType: agentType,
		Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}
	data, _ := json.Marshal(req)
	return &nats.Msg{Subject: "signoff.v1.req." + session, Data: data, Header: nats.Header{}}
}

func wantForbidden(t *testing.T, reply []byte, reason string) {
	t.Helper()
	rep, ok := messages.IsErrorReply(reply)
	if !ok || rep.Error.Code != messages.CodeForbidden || !strings.Contains(rep.Error.Message, reason) {
		t.Fatalf("reply %s, want forbidden containing %q", reply, reason)
	}
}

func TestImpersonationIsRefusedForbiddenWithTheReason(t *testing.T) {
	eachNATSMode(t, tenantsFile, testImpersonationRefused)
}

func testImpersonationRefused(t *testing.T, tp *tenantPlane) {
	agent := tp.conn(1, "acme-agent")
	raw := tp.conn(2, "acme-raw")
	for _, tc := range []struct {
		name   string
		nc     *nats.Conn
		msg    *nats.Msg
		reason string
	}{
		{"another agent id", agent, requestMsg("shared-1", "i1", "deployer", "claude-code"), `agent_id "deployer" is not this credential's agent ("coder")`},
		{"a forbidden agent type", agent, requestMsg("shared-1", "i2", "coder", "codex"), `may not use agent_type "codex"`},
		{"no agent type where one is required", agent, requestMsg("shared-1", "i3", "coder", ""), "must declare its agent_type"},
		{"another identity's session", agent, requestMsg("deploy-1", "i4", "coder", "claude-code"), `may not use session "deploy-1"`},
		{"another identity's session, by status", agent, &nats.Msg{Subject: "signoff.v1.status.deploy-1", Data: []byte(`{"v":1,"request_id":"x","session_id":"deploy-1"}`)}, `may not use session "deploy-1"`},
		{"another identity's session, by turn", agent, &nats.Msg{Subject: "signoff.v1.turn.deploy-1", Data: []byte(`{"v":1,"session_id":"deploy-1"}`)}, `may not use session "deploy-1"`},
		{"an agent responding", raw, &nats.Msg{Subject: "signoff.v1.respond", Data: []byte(`{"v":1,"request_id":"x","session_id":"s","approver":{"id":"alice"},"approved":true}`)}, "is not an approver bot"},
		{"an agent replaying questions", raw, &nats.Msg{Subject: "signoff.v1.pending.default", Data: []byte(`{"v":1}`)}, "is not an approver bot"},
		{"an agent using admin", raw, &nats.Msg{Subject: "signoff.v1.admin.list_grants", Data: []byte(`{"v":1}`)}, "is not an admin"},
		{"a bot asking as an agent", tp.conn(0, "acme-raw"), requestMsg("shared-1", "i5", "coder", "claude-code"), `is not this credential's agent ("raw")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantForbidden(t, rawRequest(t, tc.nc, tc.msg), tc.reason)
		})
	}
}

func TestImpersonationByAClientSuppliedRequestInfoGainsNothing(t *testing.T) {
	tp := startTenantPlane(t, tenantsFile)
	raw := tp.conn(1, "acme-raw")
	// GLOBEX's agent is "coder": a header claiming to be it is overwritten
	// by the server, and the request is acme-raw's.
	msg := requestMsg("shared-1", "f1", "coder", "")
	msg.Header.Set("Nats-Request-Info", `{"acc":"GLOBEX","user":"globex-agent"}`)
	wantForbidden(t, rawRequest(t, raw, msg), `agent_id "coder" is not this credential's agent ("raw")`)

	// The same header smuggled on a line the server does not read as a
	// header line (a bare LF) but nats.go does: two headers reach the
	// broker, which refuses.
	reply := rawHPUB(t, tp.cluster.ClientURL(0), "acme-raw", "pw", "signoff.v1.req.shared-1",
		"NATS/1.0\r\nX-Pad: a\nNats-Request-Info: {\"acc\":\"GLOBEX\",\"user\":\"globex-agent\"}\r\n\r\n",
		`{"v":1,"request_id":"f2","session_id":"shared-1","agent_id":"coder","tool":"bash","arguments":{"command":"ls"}}`)
	wantForbidden(t, reply, "2 Nats-Request-Info headers")
}

// rawHPUB speaks the NATS client protocol on a bare TCP connection to send
// one request with hdr as its header block exactly, and returns the reply.
func rawHPUB(t *testing.T, url, user, pass, subject, hdr, body string) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "nats://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	if _, err := r.ReadString('\n'); err != nil { // INFO
		t.Fatal(err)
	}
	connect, _ := json.Marshal(map[string]any{"user": user, "pass": pass, "headers": true, "verbose": false, "protocol": 1})
	fmt.Fprintf(conn, "CONNECT %s\r\nSUB _INBOX.raw 1\r\nHPUB %s _INBOX.raw %d %d\r\n%s%s\r\nPING\r\n",
		connect, subject, len(hdr), len(hdr)+len(body), hdr, body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("raw connection: %v", err)
		}
		switch f := strings.Fields(line); {
		case len(f) == 0 || f[0] == "PONG" || f[0] == "+OK" || f[0] == "INFO":
		case f[0] == "PING":
			fmt.Fprint(conn, "PONG\r\n")
		case f[0] == "MSG" || f[0] == "HMSG":
			n, _ := strconv.Atoi(f[len(f)-1])
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(r, buf); err != nil {
				t.Fatal(err)
			}
			if f[0] == "HMSG" {
				hlen, _ := strconv.Atoi(f[len(f)-2])
				return buf[hlen:n]
			}
			return buf[:n]
		default:
			t.Fatalf("raw connection: %s", line)
		}
	}
}

func TestIdentityIsVerifiedOnTheReceiptOfATenantsAgent(t *testing.T) {
	tp := startTenantPlane(t, tenantsFile)
	reply := rawRequest(t, tp.conn(0, "acme-agent"), requestMsg("shared-1", "v1", "coder", "claude-code"))
	var rc messages.Receipt
	if err := json.Unmarshal(reply, &rc); err != nil || rc.Identity != messages.IdentityVerified {
		t.Fatalf("receipt %s, want identity verified", reply)
	}
	// An agent's own claim to be verified is not kept: the broker marks it.
	p := brokertest.Start(t, brokertest.Options{})
	data, _ := json.Marshal(messages.Request{V: 1, RequestID: "d1", SessionID: "s", AgentID: "pod", Tool: "bash",
		Arguments: json.RawMessage(`{"command":"ls"}`), Identity: messages.IdentityVerified})
	if err := json.Unmarshal(p.RawRequest("signoff.v1.req.s", data), &rc); err != nil || rc.Identity != messages.IdentityDeclared {
		t.Fatalf("a broker without tenants: receipt identity %q, want declared", rc.Identity)
	}
	if rec := p.LastAudit("s"); rec.Request.Identity != messages.IdentityDeclared {
		t.Errorf("audit identity %q, want declared", rec.Request.Identity)
	}
}

// A tenant is added to a running plane by configuration: its NATS account
// (in operator mode, pushed to the full resolvers as `nsc push` does, with
// NATS and the brokers running) and a reload of the brokers' tenants file.
func TestTenantAddedByReloadIsServedWithoutRestart(t *testing.T) {
	for _, operator := range []bool{false, true} {
		t.Run(map[bool]string{false: "config file", true: "operator, account pushed"}[operator], func(t *testing.T) {
			testTenantAddedByReload(t, operator)
		})
	}
}

func testTenantAddedByReload(t *testing.T, operator bool) {
	acmeOnly := tenantsFile[:strings.Index(tenantsFile, "  - id: globex")]
	var tp *tenantPlane
	if operator {
		tp = startTenantPlaneIn(t, acmeOnly, true, "GLOBEX")
		if _, err := nats.Connect(tp.cluster.ClientURL(1), tp.cluster.Creds("globex-agent")); err == nil {
			t.Fatal("globex-agent connected before its account was pushed")
		}
		tp.cluster.PushAccount(t, "GLOBEX")
	} else {
		tp = startTenantPlane(t, acmeOnly)
	}
	full := tp.cluster.KeyReplacer().Replace(tenantsFile)
	notTenant := fmt.Sprintf("account %q is not a tenant", tp.cluster.Key("GLOBEX"))
	globex := tp.conn(1, "globex-agent")
	wantForbidden(t, rawRequest(t, globex, requestMsg("shared-1", "g1", "coder", "")), notTenant)
	for _, p := range tp.planes {
		f, err := tenancy.Parse([]byte(full))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Reload(f); err != nil {
			t.Fatal(err)
		}
	}
	var rc messages.Receipt
	reply := rawRequest(t, globex, requestMsg("shared-1", "g2", "coder", ""))
	if err := json.Unmarshal(reply, &rc); err != nil || rc.Decision == nil || rc.Decision.Outcome != messages.OutcomeAllow {
		t.Fatalf("after the reload: %s", reply)
	}
	// And removed again.
	for _, p := range tp.planes {
		f, _ := tenancy.Parse([]byte(tp.cluster.KeyReplacer().Replace(acmeOnly)))
		if err := p.Reload(f); err != nil {
			t.Fatal(err)
		}
	}
	wantForbidden(t, rawRequest(t, globex, requestMsg("shared-1", "g3", "coder", "")), notTenant)
}

func TestTenantModesAndAdminsNeverCross(t *testing.T) {
	tp := startTenantPlane(t, tenantsFile)
	ctx := context.Background()
	admin := tp.conn(0, "acme-admin")
	reply := rawRequest(t, admin, &nats.Msg{Subject: "signoff.v1.admin.set_mode", Data: []byte(`{"v":1,"session_id":"shared-1","mode":"yolo"}`)})
	if _, isErr := messages.IsErrorReply(reply); isErr {
		t.Fatalf("set_mode: %s", reply)
	}
	// GLOBEX's bot may not use ACME's… or its own tenant's set_mode.
	wantForbidden(t, rawRequest(t, tp.conn(1, "globex-bot"), &nats.Msg{Subject: "signoff.v1.admin.set_mode",
		Data: []byte(`{"v":1,"session_id":"shared-1","mode":"yolo"}`)}), "is not an admin")

	acme := tp.agent(1, "acme-agent", "shared-1", "coder", "claude-code")
	globex := tp.agent(2, "globex-agent", "shared-1", "coder", "")
	globexBot := tp.bot(0, "globex-bot")
	// The override reaches every replica through ACME's own bucket.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		// An attempt made before the override arrived asks: give up on it.
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		d, err := acme.Request(actx, client.Call{RequestID: fmt.Sprintf("acme-m%d", i), Tool: "bash", Arguments: brokertest.Bash("make deploy")})
		cancel()
		if err == nil && d.ReasonCode == messages.ReasonModeAllow {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ACME's yolo mode not in force: %+v %v", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// GLOBEX's session of the same id still asks.
	g := brokertest.Ask(ctx, globex, "globex-m1", "bash", brokertest.Bash("make deploy"))
	if q := globexBot.next(); q.Request.RequestID != "globex-m1" {
		t.Fatalf("GLOBEX's bot got %s", q.Request.RequestID)
	}
	if d, _ := g.Peek(); d != nil {
		t.Fatalf("GLOBEX's request decided without a human: %+v", d)
	}
}

// A fleet stop's stops_changed broadcast, sent by the replica that stored
// the stop from the brokers' own account, is no tenant's message: the
// replicas read their stops again without refusing it as forbidden
// (README walk W11: a WARN on every stop and resume looked like an attack).
func TestTheStopsBroadcastIsNotRefused(t *testing.T) {
	tp := startTenantPlane(t, tenantsFile)
	admin := tp.conn(0, "acme-admin")
	for _, op := range []string{"stop", "resume"} {
		reply := rawRequest(t, admin, &nats.Msg{Subject: "signoff.v1.admin." + op, Data: []byte(`{"v":1,"selector":{"agent":"ci-*"}}`)})
		if _, isErr := messages.IsErrorReply(reply); isErr {
			t.Fatalf("%s: %s", op, reply)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if w := tp.warns.String(); strings.Contains(w, "refused") {
		t.Errorf("the planes refused a message:\n%s", w)
	}
}
