package nats_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

var roles = []string{"broker", "approver", "admin", "agent"}

var subj = messages.Subjects{}

func TestEveryRoleDoesItsPartEndToEnd(t *testing.T) {
	ring := newKeyring(t, roles...)
	srv := startServer(t, "nats-server.conf")
	// Two replicas: the second finds the stream and bucket the first made.
	store := memstore.New(memstore.Options{})
	replicas := []*replica{startBroker(t, srv, ring, store, "replica-1"), startBroker(t, srv, ring, store, "replica-2")}

	// A refused reply must fail the test, not hang it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	approver := connect(t, srv, ring, "approver", "_INBOX.approver")
	asks := watch(t, approver, subj.AskAll())
	resolved := watch(t, approver, subj.ResolvedAll())
	agentConn := connect(t, srv, ring, "agent", "_INBOX.agent")
	admin := connect(t, srv, ring, "admin", "_INBOX.admin")
	agent, err := client.New(agentConn.Conn, client.WithSession("s-e2e"), client.WithAgent("pod-1"), client.WithAttemptTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}

	// The agent gets its receipt for a call the policy allows.
	d, err := agent.Request(ctx, client.Call{RequestID: "auto-1", Tool: "bash", Arguments: brokertest.Bash("ls -la")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonPolicyAllow)

	// A call that asks: the approver bot sees the question, answers with a
	// signed response, and the agent gets the decision.
	pending := brokertest.Ask(ctx, agent, "ask-1", "bash", brokertest.Bash("make deploy"))
	var q messages.ApprovalNeeded
	asks.find(t, "ask-1", &q)
	signer, err := approverbot.NewNKeySigner(ring.seedFile(t, "approver"))
	if err != nil {
		t.Fatal(err)
	}
	resp := messages.Response{V: 1, RequestID: "ask-1", SessionID: "s-e2e",
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Scope: messages.ScopeOnce, Digest: q.Digest}
	if err := signer.Sign(&resp); err != nil {
		t.Fatal(err)
	}
	var rep messages.RespondReply
	request(t, approver, subj.Respond(), resp, &rep)
	if !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("respond: %+v", rep)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	var res messages.Resolved
	resolved.find(t, "ask-1", &res)
	if res.Decision.DecidedBy.ID != "alice" {
		t.Fatalf("resolved: %+v", res)
	}
	var open messages.PendingReply
	request(t, approver, subj.Pending("default"), messages.PendingRequest{V: 1}, &open)
	if len(open.Questions) != 0 {
		t.Fatalf("open questions after the answer: %+v", open.Questions)
	}

	// The approver answers a question for the session, then lists and
	// revokes the grant on the two admin subjects it may use.
	pending = brokertest.Ask(ctx, agent, "ask-2", "bash", brokertest.Bash("make test"))
	asks.find(t, "ask-2", &q)
	resp = messages.Response{V: 1, RequestID: "ask-2", SessionID: "s-e2e",
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Scope: messages.ScopeSession, Digest: q.Digest}
	if err := signer.Sign(&resp); err != nil {
		t.Fatal(err)
	}
	request(t, approver, subj.Respond(), resp, &rep)
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	var listed messages.AdminReply
	request(t, approver, subj.Admin(messages.AdminOpListGrants), messages.AdminRequest{V: 1, By: "alice"}, &listed)
	if len(listed.Grants) != 1 || listed.Grants[0].RequestID != "ask-2" {
		t.Fatalf("list_grants: %+v", listed)
	}
	var revoked messages.AdminReply
	request(t, approver, subj.Admin(messages.AdminOpRevokeGrant), messages.AdminRequest{V: 1, GrantID: listed.Grants[0].ID, By: "alice"}, &revoked)
	if !revoked.OK || revoked.Grant == nil || revoked.Grant.ID != listed.Grants[0].ID {
		t.Fatalf("revoke_grant: %+v", revoked)
	}

	// The admin sets the session's mode; the agent's next call follows it.
	var ar messages.AdminReply
	request(t, admin, subj.Admin(messages.AdminOpSetMode), messages.AdminRequest{V: 1, SessionID: "s-e2e", Mode: "yolo"}, &ar)
	if !ar.OK {
		t.Fatalf("set_mode: %+v", ar)
	}
	// The replica that takes the call may not have seen the bucket update
	// yet; its call then asks and waits for a human, so each try gets a
	// short deadline and a pending ask is cancelled before the next.
	deadline := time.Now().Add(10 * time.Second)
	for {
		try, stop := context.WithTimeout(ctx, time.Second)
		d, err := agent.Request(try, client.Call{Tool: "bash", Arguments: brokertest.Bash("make deploy")})
		stop()
		if err == nil && d.ReasonCode == messages.ReasonModeAllow {
			break
		}
		if err == nil && d.Outcome == messages.OutcomeAllow {
			t.Fatalf("allowed for another reason than the mode: %+v", d)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mode override never applied: %+v %v", d, err)
		}
		if _, err := agent.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if cancelled, err := agent.Cancel(ctx, "never-sent"); err != nil || len(cancelled) != 0 {
		t.Fatalf("cancel: %v %v", cancelled, err)
	}
	if _, err := agent.NewTurn(ctx); err != nil {
		t.Fatalf("turn: %v", err)
	}
	if _, err := agent.Status(ctx, "ask-1"); err != nil {
		t.Fatalf("status: %v", err)
	}

	// The admin reads the audit stream.
	js, err := jetstream.New(admin.Conn)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, messages.AuditStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj.Audit("s-e2e")}})
	if err != nil {
		t.Fatalf("admin audit consumer: %v", err)
	}
	batch, err := cons.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var audited []string
	for m := range batch.Messages() {
		recs, err := messages.AuditRecords(m.Data())
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			audited = append(audited, rec.Decision.RequestID)
		}
	}
	if len(audited) != 2 || audited[0] != "auto-1" || audited[1] != "ask-1" {
		t.Fatalf("audit records %v, want auto-1 and ask-1", audited)
	}
	stream, err := js.Stream(ctx, messages.AuditStream)
	if err != nil {
		t.Fatalf("admin stream info: %v", err)
	}
	first, err := stream.GetMsg(ctx, 1)
	if err != nil || !strings.Contains(string(first.Data), `"auto-1"`) {
		t.Fatalf("admin get audit message 1: %v", err)
	}

	// A broker may read the audit stream by subject: a late append looks
	// its record up first (internal/broker, audit.go).
	lookup, err := replicas[0].conn.Conn.Request("$JS.API.STREAM.MSG.GET."+messages.AuditStream,
		[]byte(`{"seq":1,"next_by_subj":"`+subj.Audit("s-e2e")+`"}`), 5*time.Second)
	if err != nil || !strings.Contains(string(lookup.Data), `"message"`) {
		t.Fatalf("broker look-up of an audit record: %v %s", err, lookupData(lookup))
	}

	// A replica that stops deletes its watch consumer.
	if err := replicas[1].stop(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*conn{replicas[0].conn, replicas[1].conn, approver, agentConn, admin} {
		c.noViolations(t)
	}
}

// The table lists what each role must not do; each entry is one
// publication or subscription the server must refuse.
func TestEachRoleIsRefusedWhatIsNotItsJob(t *testing.T) {
	ring := newKeyring(t, roles...)
	srv := startServer(t, "nats-server.conf")
	inbox := map[string]string{"broker": "", "approver": "_INBOX.approver", "admin": "_INBOX.admin", "agent": "_INBOX.agent"}
	forbidden := map[string]struct {
		publish   []string
		subscribe [][2]string // subject, queue
	}{
		"agent": {
			publish: []string{
				"signoff.v1.decision.s1.r1",      // forge a decision for another agent
				"signoff.v1.respond",             // approve its own call
				"signoff.v1.ask.default",         // fake a question to approvers
				"signoff.v1.resolved.default",    // clear a question from devices
				"signoff.v1.pending.default",     // list the team's questions
				"signoff.v1.admin.set_mode",      // switch itself to yolo
				"signoff.v1.admin.reload_policy", // reload policy
				"signoff.v1.admin.revoke_grants", // revoke grants
				"signoff.v1.admin.list_grants",   // read grants
				"signoff.v1.admin.revoke_grant",  // revoke a grant
				"signoff.v1.audit.s1",            // write the audit log
				"$KV.SIGNOFF_MODES.session.s1",   // set a mode behind the broker
				"$JS.API.STREAM.DELETE.SIGNOFF_AUDIT",
				"$JS.API.INFO",
				"_INBOX.approver.x", // answer an approver's request
			},
			subscribe: [][2]string{
				{"signoff.v1.ask.>", ""},
				{"signoff.v1.ask.default", ""},
				{"signoff.v1.resolved.*", ""},
				{"signoff.v1.respond", "signoff-brokers"}, // impersonate a broker
				{"signoff.v1.req.*", "signoff-brokers"},
				{"signoff.v1.req.*", ""},
				{"signoff.v1.admin.>", ""},
				{"signoff.v1.audit.>", ""},
				{"signoff.v1.decision.>", ""}, // wider than decision.*.*
				{"_INBOX.>", ""},
				{"_INBOX.approver.>", ""},
				{">", ""},
			},
		},
		"approver": {
			publish: []string{
				"signoff.v1.decision.s1.r1",
				"signoff.v1.ask.default",
				"signoff.v1.resolved.default",
				"signoff.v1.req.s1",
				"signoff.v1.cancel.s1",
				"signoff.v1.turn.s1",
				"signoff.v1.admin.set_mode",
				"signoff.v1.admin.revoke_grants", // only one grant at a time, for a user
				"signoff.v1.admin.reload_policy",
				"signoff.v1.admin.other",
				"signoff.v1.audit.s1",
				"$KV.SIGNOFF_MODES.session.s1",
				"_INBOX.agent.x",
			},
			subscribe: [][2]string{
				{"signoff.v1.respond", "signoff-brokers"},
				{"signoff.v1.respond", ""},
				{"signoff.v1.req.*", "signoff-brokers"},
				{"signoff.v1.decision.*.*", ""},
				{"signoff.v1.admin.>", ""},
				{"_INBOX.agent.>", ""},
				{"_INBOX.>", ""},
			},
		},
		"admin": {
			publish: []string{
				"signoff.v1.req.s1",
				"signoff.v1.respond",
				"signoff.v1.decision.s1.r1",
				"signoff.v1.ask.default",
				"$KV.SIGNOFF_MODES.session.s1", // modes change through the broker
				"$JS.API.STREAM.DELETE.SIGNOFF_AUDIT",
				"$JS.API.STREAM.PURGE.SIGNOFF_AUDIT",
				"$JS.API.STREAM.MSG.DELETE.SIGNOFF_AUDIT",
				"$JS.API.STREAM.UPDATE.SIGNOFF_AUDIT",
			},
			subscribe: [][2]string{
				{"signoff.v1.ask.*", ""},
				{"signoff.v1.decision.*.*", ""},
				{"signoff.v1.admin.>", "signoff-brokers"},
				{"_INBOX.agent.>", ""},
			},
		},
		"broker": {
			publish: []string{
				"signoff.v1.respond",
				"signoff.v1.req.s1",
				"signoff.v1.admin.set_mode",
				"signoff.v1.pending.default",
				"$JS.API.STREAM.DELETE.SIGNOFF_AUDIT",
				"$JS.API.STREAM.PURGE.SIGNOFF_AUDIT",
				"$JS.API.STREAM.MSG.DELETE.SIGNOFF_AUDIT",
				"$JS.API.STREAM.DELETE.KV_SIGNOFF_MODES",
				"$JS.API.STREAM.CREATE.OTHER",
				"$KV.OTHER.key",
			},
			subscribe: [][2]string{
				{"signoff.v1.req.*", ""}, // outside the queue group
				{"signoff.v1.respond", "another-group"},
				{"signoff.v1.ask.*", ""},
				{"signoff.v1.decision.*.*", ""},
			},
		},
	}
	for _, role := range roles {
		t.Run(role, func(t *testing.T) {
			c := connect(t, srv, ring, role, inbox[role])
			for _, s := range forbidden[role].publish {
				t.Run("publish "+s, func(t *testing.T) { c.refusePublish(t, s) })
			}
			for _, s := range forbidden[role].subscribe {
				name := "subscribe " + s[0]
				if s[1] != "" {
					name += " in queue " + s[1]
				}
				t.Run(name, func(t *testing.T) { c.refuseSubscribe(t, s[0], s[1]) })
			}
		})
	}
}

func TestOnlyKnownKeysConnect(t *testing.T) {
	ring := newKeyring(t, roles...)
	srv := startServer(t, "nats-server.conf")
	if nc, err := nats.Connect(srv.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("a client without a key connected")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("anonymous: %v, want an authorization violation", err)
	}
	stranger, _ := nkeys.CreateUser()
	pub, _ := stranger.PublicKey()
	if nc, err := nats.Connect(srv.ClientURL(), nats.Nkey(pub, stranger.Sign)); err == nil {
		nc.Close()
		t.Fatal("an unknown nkey connected")
	}
	// A known public key without its private key cannot answer the
	// challenge.
	agentPub := ring.public(t, "agent")
	if nc, err := nats.Connect(srv.ClientURL(), nats.Nkey(agentPub, stranger.Sign)); err == nil {
		nc.Close()
		t.Fatal("the agent's public key connected with another key's signature")
	}
}

func TestAMissingKeyStopsTheServerFromStarting(t *testing.T) {
	newKeyring(t, "broker", "approver", "admin") // no SIGNOFF_NKEY_AGENT
	_, err := server.ProcessConfigFile("nats-server.conf")
	if err == nil || !strings.Contains(err.Error(), "SIGNOFF_NKEY_AGENT") {
		t.Fatalf("err = %v, want one naming SIGNOFF_NKEY_AGENT", err)
	}
}

// With one NATS user per agent, agents cannot read each other's replies,
// and an agent pinned to its session can touch nothing else.
func TestPerAgentUsersKeepAgentsApart(t *testing.T) {
	ring := newKeyring(t, "broker", "approver", "admin", "agent-1", "agent-2")
	srv := startServer(t, "nats-server-per-agent.conf")
	rep := startBroker(t, srv, ring, memstore.New(memstore.Options{}), "replica-1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	agent1 := connect(t, srv, ring, "agent-1", "_INBOX.agent-1")
	agent2 := connect(t, srv, ring, "agent-2", "_INBOX.agent-2")
	for _, tc := range []struct {
		c       *conn
		session string
	}{{agent1, "any-session"}, {agent1, "agent-2"}, {agent2, "agent-2"}} {
		c, err := client.New(tc.c.Conn, client.WithSession(tc.session), client.WithAgent(tc.c.user), client.WithAttemptTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Request(ctx, client.Call{Tool: "bash", Arguments: brokertest.Bash("ls -la")})
		if err != nil {
			t.Fatalf("%s in session %s: %v", tc.c.user, tc.session, err)
		}
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonPolicyAllow)
	}
	for _, c := range []*conn{rep.conn, agent1, agent2} {
		c.noViolations(t)
	}

	// Nobody reads another agent's replies.
	agent1.refuseSubscribe(t, "_INBOX.agent-2.>", "")
	agent1.refuseSubscribe(t, "_INBOX.>", "")
	agent2.refuseSubscribe(t, "_INBOX.agent-1.>", "")
	agent2.refuseSubscribe(t, "_INBOX.agent.>", "")
	// The pinned agent stays in its session.
	for _, s := range []string{"signoff.v1.req.other", "signoff.v1.status.other", "signoff.v1.cancel.other", "signoff.v1.turn.other"} {
		agent2.refusePublish(t, s)
	}
	agent2.refuseSubscribe(t, "signoff.v1.decision.other.*", "")
	agent2.refuseSubscribe(t, "signoff.v1.decision.*.*", "")

	// An agent that forgets its inbox prefix cannot even get its receipt:
	// the server refuses the default _INBOX subscription.
	careless := connect(t, srv, ring, "agent-1", "")
	_, err := careless.Request(subj.Req("any-session"), []byte(`{"v":1}`), 500*time.Millisecond)
	if err == nil {
		t.Fatal("a reply arrived on the default inbox")
	}
	careless.wantViolation(t, `Subscription to "_INBOX.`)
}

func lookupData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}
