package testenv_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/testenv"
)

// The NATS facts the tenancy design (docs/OPERATIONS.md, "Tenants and
// identity") rests on, checked against the real nats-server on a 3-node
// cluster: clients connect to different nodes on purpose.

func twoTenants() testenv.Accounts {
	return testenv.Accounts{Tenants: map[string][]testenv.AccountUser{
		"ACME": {
			{Name: "acme-agent", Password: "a", Role: testenv.RoleAgent},
			{Name: "acme-bot", Password: "b", Role: testenv.RoleBot},
		},
		"GLOBEX": {
			{Name: "globex-agent", Password: "g", Role: testenv.RoleAgent},
			{Name: "globex-bot", Password: "h", Role: testenv.RoleBot},
		},
	}}
}

// eachMode runs f on a 3-node cluster of twoTenants configured by a
// config file and, again, in operator mode: JWTs preloaded in a MEMORY
// resolver, and JWTs pushed to full resolvers after start.
func eachMode(t *testing.T, f func(t *testing.T, c *testenv.NATSCluster)) {
	for _, m := range []struct {
		name         string
		op, resolver bool
	}{{"config file", false, false}, {"operator", true, false}, {"operator, full resolver", true, true}} {
		t.Run(m.name, func(t *testing.T) {
			a := twoTenants()
			a.Operator, a.FullResolver = m.op, m.resolver
			c := testenv.NATSAccountsCluster(t, 3, a)
			if c.Operator() != m.op {
				t.Fatalf("Operator() = %v", c.Operator())
			}
			f(t, c)
		})
	}
}

type requestInfo struct {
	Account string `json:"acc"`
	User    string `json:"user"`
	Name    string `json:"name"`
}

// serveEcho answers every request on subject with the Nats-Request-Info the
// broker's account received.
func serveEcho(t *testing.T, nc *nats.Conn, subject string) {
	t.Helper()
	_, err := nc.Subscribe(subject, func(m *nats.Msg) {
		_ = m.Respond([]byte(m.Header.Get("Nats-Request-Info")))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func askInfo(t *testing.T, nc *nats.Conn, msg *nats.Msg) requestInfo {
	t.Helper()
	var reply *nats.Msg
	var err error
	// The subscription's interest reaches the other nodes asynchronously.
	for i := 0; i < 50; i++ {
		if reply, err = nc.RequestMsg(msg, time.Second); !errors.Is(err, nats.ErrNoResponders) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("request %s: %v", msg.Subject, err)
	}
	var ri requestInfo
	if err := json.Unmarshal(reply.Data, &ri); err != nil {
		t.Fatalf("Nats-Request-Info %q: %v", reply.Data, err)
	}
	return ri
}

func TestTenantAccountsStampEveryRequestWithTheRequestersAccountAndUser(t *testing.T) {
	eachMode(t, func(t *testing.T, c *testenv.NATSCluster) {
		serveEcho(t, c.Connect(t, 0, "broker", "broker"), "signoff.v1.req.*")
		for _, tc := range []struct {
			node            int
			user, pass, acc string
		}{
			{1, "acme-agent", "a", "ACME"},
			{2, "globex-agent", "g", "GLOBEX"},
		} {
			// The connection name is the client's own choice: it proves nothing.
			nc := c.Connect(t, tc.node, tc.user, tc.pass, nats.Name("someone-else"))
			ri := askInfo(t, nc, nats.NewMsg("signoff.v1.req.s1"))
			if ri.Account != c.Key(tc.acc) || ri.User != c.Key(tc.user) {
				t.Errorf("%s: Nats-Request-Info acc=%q user=%q, want %q %q", tc.user, ri.Account, ri.User, c.Key(tc.acc), c.Key(tc.user))
			}
			if c.Operator() && (!strings.HasPrefix(ri.Account, "A") || !strings.HasPrefix(ri.User, "U")) {
				t.Errorf("operator mode: acc=%q user=%q, want public keys A… and U…", ri.Account, ri.User)
			}
			if ri.Name != "someone-else" {
				t.Errorf("name = %q: the server no longer passes the client's own name", ri.Name)
			}
		}
	})
}

func TestImpersonationByAClientSuppliedRequestInfoIsOverwrittenByTheServer(t *testing.T) {
	eachMode(t, func(t *testing.T, c *testenv.NATSCluster) {
		serveEcho(t, c.Connect(t, 0, "broker", "broker"), "signoff.v1.req.*")
		agent := c.Connect(t, 1, "acme-agent", "a")

		msg := nats.NewMsg("signoff.v1.req.s1")
		msg.Header.Set("Nats-Request-Info", `{"acc":"`+c.Key("GLOBEX")+`","user":"`+c.Key("globex-agent")+`"}`)
		ri := askInfo(t, agent, msg)
		if ri.Account != c.Key("ACME") || ri.User != c.Key("acme-agent") {
			t.Fatalf("a forged header reached the broker: acc=%q user=%q", ri.Account, ri.User)
		}
	})
}

func TestTenantStreamsReachOnlyTheirOwnAccountOnThePlainSubject(t *testing.T) {
	eachMode(t, func(t *testing.T, c *testenv.NATSCluster) {
		broker := c.Connect(t, 0, "broker", "broker")
		acme := c.Connect(t, 1, "acme-agent", "a")
		globex := c.Connect(t, 2, "globex-agent", "g")
		acmeBot := c.Connect(t, 2, "acme-bot", "b")
		globexBot := c.Connect(t, 1, "globex-bot", "h")

		subscribe := func(nc *nats.Conn, subject string) *nats.Subscription {
			sub, err := nc.SubscribeSync(subject)
			if err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			return sub
		}
		acmeDec := subscribe(acme, "signoff.v1.decision.>")
		globexDec := subscribe(globex, "signoff.v1.decision.>")
		acmeAsk := subscribe(acmeBot, "signoff.v1.ask.*")
		globexAsk := subscribe(globexBot, "signoff.v1.ask.*")
		acmeRes := subscribe(acmeBot, "signoff.v1.resolved.*")
		time.Sleep(300 * time.Millisecond) // interest crosses the routes

		acc := c.Key("ACME")
		for _, s := range []string{"signoff.v1.t." + acc + ".decision.s1.r1", "signoff.v1.t." + acc + ".ask.default", "signoff.v1.t." + acc + ".resolved.default"} {
			if err := broker.Publish(s, []byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		if err := broker.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			sub  *nats.Subscription
			want string
		}{
			{acmeDec, "signoff.v1.decision.s1.r1"},
			{acmeAsk, "signoff.v1.ask.default"},
			{acmeRes, "signoff.v1.resolved.default"},
		} {
			m, err := tc.sub.NextMsg(3 * time.Second)
			if err != nil {
				t.Fatalf("%s: %v", tc.want, err)
			}
			if m.Subject != tc.want {
				t.Errorf("delivered on %q, want %q", m.Subject, tc.want)
			}
		}
		for name, sub := range map[string]*nats.Subscription{"GLOBEX decision": globexDec, "GLOBEX ask": globexAsk} {
			if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
				t.Errorf("%s received ACME's %q", name, m.Subject)
			}
		}
	})
}

func TestImpersonationOfTheBrokerByAnAgentPublishingQuestionsIsRefusedByTheServer(t *testing.T) {
	c := testenv.NATSAccountsCluster(t, 3, twoTenants())
	bot := c.Connect(t, 0, "acme-bot", "b")
	var violations = make(chan error, 8)
	agent := c.Connect(t, 1, "acme-agent", "a", nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		violations <- err
	}))
	sub, err := bot.SubscribeSync("signoff.v1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	for _, s := range []string{"signoff.v1.ask.default", "signoff.v1.resolved.default", "signoff.v1.decision.s1.r1", "signoff.v1.respond"} {
		_ = agent.Publish(s, []byte("forged"))
	}
	_ = agent.Flush()
	if m, err := sub.NextMsg(500 * time.Millisecond); err == nil {
		t.Fatalf("the bot received an agent's %q", m.Subject)
	}
	select {
	case err := <-violations:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Errorf("agent's error = %v, want a permissions violation", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("the server did not report a permissions violation to the agent")
	}
}

func TestTenantStreamOfAnotherAccountCannotBeImported(t *testing.T) {
	conf := testenv.Accounts{Tenants: map[string][]testenv.AccountUser{"ACME": nil, "GLOBEX": nil}}.Config()
	// GLOBEX tries to import ACME's decisions.
	conf = strings.Replace(conf, `subject: "signoff.v1.t.GLOBEX.decision.>"`, `subject: "signoff.v1.t.ACME.decision.>"`, 1)
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte("port: -1\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err == nil {
		o.NoLog, o.NoSigs = true, true
		var srv *server.Server
		if srv, err = server.NewServer(o); err == nil {
			srv.Shutdown()
			t.Fatal("the server accepted GLOBEX importing ACME's per-tenant stream")
		}
	}
	if !strings.Contains(err.Error(), "not authorized") {
		t.Fatalf("refused for another reason: %v", err)
	}
}
