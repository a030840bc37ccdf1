package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// tenantUsers are the users of a tenant account, as genkeys names them
// (demo-agent → SIGNOFF_NKEY_DEMO_AGENT).
var tenantUsers = []string{"agent", "approver", "admin"}

// startAccounts runs a server with server.conf, account-signoff.conf and,
// for each tenant, a copy of tenant-demo.conf with DEMO replaced by the
// tenant's account name: the way accounts.conf says to add a tenant.
func startAccounts(t *testing.T, tenants ...string) (*server.Server, keyring) {
	t.Helper()
	dir := t.TempDir()
	copyFile := func(name string, edit func(string) string) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), []byte(edit(string(data))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	copyFile("server.conf", same)
	copyFile("account-signoff.conf", same)
	names := []string{"broker", "admin", "approver"}
	accounts := "accounts {\n  SIGNOFF { include \"account-signoff.conf\" }\n"
	for _, acc := range tenants {
		data, err := os.ReadFile("tenant-demo.conf")
		if err != nil {
			t.Fatal(err)
		}
		file := "tenant-" + strings.ToLower(acc) + ".conf"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.ReplaceAll(string(data), "DEMO", acc)), 0o600); err != nil {
			t.Fatal(err)
		}
		accounts += fmt.Sprintf("  %s { include %q }\n", acc, file)
		for _, u := range tenantUsers {
			names = append(names, strings.ToLower(acc)+"-"+u)
		}
	}
	accounts += "}\n"
	conf := filepath.Join(dir, "nats-server.conf")
	if err := os.WriteFile(filepath.Join(dir, "accounts.conf"), []byte(accounts), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("include \"server.conf\"\ninclude \"accounts.conf\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ring := newKeyring(t, names...)
	return startServer(t, conf), ring
}

// The shipped nats-server-accounts.conf, exactly: a real broker in SIGNOFF
// answers the DEMO agent's request through the imported service (its reply
// crosses back through _R_), and no connection is refused anything.
func TestTenantAgentIsAnsweredByABrokerInTheSignoffAccount(t *testing.T) {
	ring := newKeyring(t, "broker", "admin", "approver", "demo-agent", "demo-approver", "demo-admin")
	srv := startServer(t, "nats-server-accounts.conf")
	b := startBroker(t, srv, ring, memstore.New(memstore.Options{}), "broker-1")
	agent := connect(t, srv, ring, "demo-agent", "_INBOX.agent")

	c, err := client.New(agent.Conn, client.WithSession("demo-s1"), client.WithAgent("demo-agent"), client.WithAttemptTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id := nuid.Next()
	d, err := c.Request(ctx, client.Call{RequestID: id, Tool: "bash", Arguments: json.RawMessage(`{"command":"ls -la"}`)})
	if err != nil {
		t.Fatalf("the DEMO agent's request through the import: %v", err)
	}
	if d.RequestID != id || d.Outcome != messages.OutcomeAllow || d.ReasonCode != messages.ReasonPolicyAllow {
		t.Fatalf("decision %+v, want the policy's automatic allow of %s", d, id)
	}
	agent.noViolations(t)
	b.noViolations(t)
}

// Requests from a tenant reach the brokers with Nats-Request-Info naming
// the tenant's account and the requester's key, set by the server: a
// header the agent sends itself is replaced, not passed on.
func TestIdentityOfATenantRequestIsStampedByTheServer(t *testing.T) {
	srv, ring := startAccounts(t, "ACME", "GLOBEX")
	b := connect(t, srv, ring, "broker", "")
	got := make(chan *nats.Msg, 4)
	if _, err := b.QueueSubscribe("signoff.v1.req.*", "signoff-brokers", func(m *nats.Msg) {
		got <- m
		_ = m.Respond([]byte(`{"v":1}`))
	}); err != nil {
		t.Fatal(err)
	}
	b.Flush()

	for _, tc := range []struct {
		user, account, forged string
	}{
		{"acme-agent", "ACME", ""},
		{"globex-agent", "GLOBEX", `{"acc":"ACME","user":"` + ring.public(t, "acme-agent") + `"}`},
	} {
		a := connect(t, srv, ring, tc.user, "_INBOX.agent")
		m := nats.NewMsg("signoff.v1.req.s1")
		m.Data = []byte(`{"v":1}`)
		if tc.forged != "" {
			m.Header.Set("Nats-Request-Info", tc.forged)
		}
		if _, err := a.RequestMsg(m, 5*time.Second); err != nil {
			t.Fatalf("%s: no reply through the import: %v", tc.user, err)
		}
		in := <-got
		var info struct {
			Account string `json:"acc"`
			User    string `json:"user"`
		}
		if err := json.Unmarshal([]byte(in.Header.Get("Nats-Request-Info")), &info); err != nil {
			t.Fatalf("%s: Nats-Request-Info %q: %v", tc.user, in.Header.Get("Nats-Request-Info"), err)
		}
		if info.Account != tc.account || info.User != ring.public(t, tc.user) {
			t.Errorf("%s (forged header %q): the broker saw account %q user %q, want %s and its own key", tc.user, tc.forged, info.Account, info.User, tc.account)
		}
		if n := len(in.Header.Values("Nats-Request-Info")); n != 1 {
			t.Errorf("%s: %d Nats-Request-Info headers, want the server's only", tc.user, n)
		}
		a.noViolations(t)
	}
	b.noViolations(t)
}

// Two tenants with the same session ids: what the brokers publish for ACME
// (decisions, questions, resolutions) reaches ACME's agent and bot under
// the plain subjects, and nothing of it reaches GLOBEX.
func TestTenantDecisionsQuestionsAndResolutionsNeverCross(t *testing.T) {
	srv, ring := startAccounts(t, "ACME", "GLOBEX")
	b := connect(t, srv, ring, "broker", "")
	subs := map[string]*watcher{}
	for _, acc := range []string{"acme", "globex"} {
		agent := connect(t, srv, ring, acc+"-agent", "_INBOX.agent")
		bot := connect(t, srv, ring, acc+"-approver", "_INBOX.approver")
		subs[acc+" decision"] = watch(t, agent, "signoff.v1.decision.*.*")
		subs[acc+" ask"] = watch(t, bot, "signoff.v1.ask.*")
		subs[acc+" resolved"] = watch(t, bot, "signoff.v1.resolved.*")
	}
	for _, kind := range []string{"decision.s1", "ask", "resolved"} {
		id := nuid.Next()
		subject := "signoff.v1.t.ACME." + kind + ".default"
		if kind == "decision.s1" {
			subject = "signoff.v1.t.ACME.decision.s1." + id
		}
		if err := b.Publish(subject, []byte(`{"request_id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
		b.Flush()
		name := strings.TrimSuffix(kind, ".s1")
		var probe map[string]any
		subs["acme "+name].find(t, id, &probe)
		subs["acme "+name].mu.Lock()
		last := subs["acme "+name].msgs[len(subs["acme "+name].msgs)-1].Subject
		subs["acme "+name].mu.Unlock()
		if want := "signoff.v1." + strings.TrimPrefix(subject, "signoff.v1.t.ACME."); last != want {
			t.Errorf("ACME got %s on %q, want the plain subject %q", name, last, want)
		}
	}
	// Give anything that would cross the time to arrive.
	time.Sleep(200 * time.Millisecond)
	for _, name := range []string{"decision", "ask", "resolved"} {
		w := subs["globex "+name]
		w.mu.Lock()
		if len(w.msgs) != 0 {
			t.Errorf("GLOBEX received ACME's %s: %s %s", name, w.msgs[0].Subject, w.msgs[0].Data)
		}
		w.mu.Unlock()
	}
	b.noViolations(t)
}

// A tenant account that imports another tenant's decisions is refused by
// the server (account_token_position): the config does not load.
func TestTenantCannotImportAnotherTenantsDecisions(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"server.conf", "account-signoff.conf"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "nats-server.conf")
	evil := `include "server.conf"
accounts {
  SIGNOFF { include "account-signoff.conf" }
  ACME { users: [ { user: a, password: a } ] }
  GLOBEX {
    users: [ { user: g, password: g } ]
    imports: [ { stream: { account: SIGNOFF, subject: "signoff.v1.t.ACME.decision.>" }, to: "signoff.v1.decision.>" } ]
  }
}
`
	if err := os.WriteFile(conf, []byte(evil), 0o600); err != nil {
		t.Fatal(err)
	}
	newKeyring(t, "broker", "admin")
	opts, err := server.ProcessConfigFile(conf)
	if err == nil {
		opts.Host, opts.Port, opts.HTTPPort, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, 0, t.TempDir(), true, true
		var srv *server.Server
		srv, err = server.NewServer(opts)
		if err == nil {
			srv.Shutdown()
		}
	}
	if err == nil || !strings.Contains(err.Error(), "not authorized") {
		t.Fatalf("GLOBEX importing ACME's decisions: %v, want it refused as not authorized", err)
	}
}

// Each tenant user may do its job only: an agent cannot answer, forge a
// question, a resolution or a decision, administer, or read questions; a
// bot cannot ask or read decisions; a tenant admin cannot ask or answer.
func TestImpersonationTenantUsersAreRefusedWhatIsNotTheirJob(t *testing.T) {
	srv, ring := startAccounts(t, "ACME")
	refusals := map[string]struct{ publish, subscribe []string }{
		"acme-agent": {
			publish: []string{"signoff.v1.respond", "signoff.v1.ask.default", "signoff.v1.resolved.default",
				"signoff.v1.decision.s1.r1", "signoff.v1.pending.default", "signoff.v1.admin.set_mode",
				"signoff.v1.admin.list_grants", "signoff.v1.t.ACME.decision.s1.r1", "signoff.v1.audit.s1", "$JS.API.INFO"},
			subscribe: []string{"signoff.v1.ask.*", "signoff.v1.resolved.*", "signoff.v1.t.>", "_INBOX.>", "_INBOX.approver.>", "signoff.v1.req.*"},
		},
		"acme-approver": {
			publish:   []string{"signoff.v1.req.s1", "signoff.v1.cancel.s1", "signoff.v1.turn.s1", "signoff.v1.decision.s1.r1", "signoff.v1.ask.default", "signoff.v1.admin.set_mode", "signoff.v1.admin.revoke_grants"},
			subscribe: []string{"signoff.v1.decision.*.*", "_INBOX.agent.>", "signoff.v1.respond"},
		},
		"acme-admin": {
			publish:   []string{"signoff.v1.req.s1", "signoff.v1.respond", "signoff.v1.decision.s1.r1", "$JS.API.STREAM.INFO.SIGNOFF_AUDIT"},
			subscribe: []string{"signoff.v1.decision.*.*", "signoff.v1.ask.*", "_INBOX.agent.>"},
		},
	}
	for user, r := range refusals {
		t.Run(user, func(t *testing.T) {
			inbox := map[string]string{"acme-agent": "_INBOX.agent", "acme-approver": "_INBOX.approver", "acme-admin": "_INBOX.admin"}[user]
			c := connect(t, srv, ring, user, inbox)
			for _, s := range r.publish {
				c.refusePublish(t, s)
			}
			for _, s := range r.subscribe {
				c.refuseSubscribe(t, s, "")
			}
		})
	}
	// And the brokers' queue group is the brokers' own.
	c := connect(t, srv, ring, "acme-agent", "_INBOX.agent")
	c.refuseSubscribe(t, "signoff.v1.req.*", "signoff-brokers")
}

// Only the brokers publish in the SIGNOFF account, and not on the subjects
// they serve: a client there publishes without passing an import, so the
// Nats-Request-Info header the brokers read would be its own (red team:
// SIGNOFF's operator set a tenant's session to yolo with a forged header).
func TestImpersonationNoSignoffAccountUserPublishesAServedSubject(t *testing.T) {
	srv, ring := startAccounts(t, "ACME")
	served := []string{"signoff.v1.req.s1", "signoff.v1.status.s1", "signoff.v1.cancel.s1", "signoff.v1.turn.s1",
		"signoff.v1.respond", "signoff.v1.people", "signoff.v1.pending.default", "signoff.v1.admin.set_mode",
		"signoff.v1.admin.stop", "signoff.v1.admin.list_grants", "signoff.v1.admin.set_shadow"}
	for user, inbox := range map[string]string{"admin": "_INBOX.admin", "broker": ""} {
		t.Run(user, func(t *testing.T) {
			c := connect(t, srv, ring, user, inbox)
			for _, s := range served {
				c.refusePublish(t, s)
			}
		})
	}
}

// An admin request every replica answers (policy_version) reaches a tenant
// admin from every replica through the imported service: the export is a
// stream of responses, not one (README walk W4: the compose plane listed
// one replica of three, so policy drift went unseen).
func TestTenantAdminHearsEveryReplica(t *testing.T) {
	ring := newKeyring(t, "broker", "admin", "approver", "demo-agent", "demo-approver", "demo-admin")
	srv := startServer(t, "nats-server-accounts.conf")
	store := memstore.New(memstore.Options{})
	b1 := startBroker(t, srv, ring, store, "broker-1")
	b2 := startBroker(t, srv, ring, store, "broker-2")
	admin := connect(t, srv, ring, "demo-admin", "_INBOX.admin")
	inbox := admin.NewRespInbox()
	sub, err := admin.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.PublishRequest("signoff.v1.admin.policy_version", inbox, []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	replicas := map[string]bool{}
	for {
		msg, err := sub.NextMsg(2 * time.Second)
		if err != nil {
			break
		}
		var r messages.AdminReply
		if err := json.Unmarshal(msg.Data, &r); err != nil || r.Policy == nil {
			t.Fatalf("reply %q: %v", msg.Data, err)
		}
		replicas[r.Policy.Replica] = true
	}
	if len(replicas) != 2 {
		t.Errorf("replicas that answered: %v, want broker-1 and broker-2", replicas)
	}
	admin.noViolations(t)
	b1.noViolations(t)
	b2.noViolations(t)
}
