package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// BrokersAccount is the NATS account of the brokers in [Accounts]
// (docs/OPERATIONS.md, "Tenants and identity").
const BrokersAccount = "SIGNOFF"

// Role is what a tenant user may publish: the subjects of its role are
// the only ones it may publish on (a closed allow-list), besides replies.
type Role string

// The roles of a tenant's users.
const (
	// RoleAgent may ask (req, status, cancel, turn).
	RoleAgent Role = "agent"
	// RoleBot may respond, replay pending questions, and use the admin
	// subjects (list and revoke grants).
	RoleBot Role = "bot"
	// RoleAdmin may use the admin subjects.
	RoleAdmin Role = "admin"
	// RoleAny may publish anything in its account (for tests that show the
	// broker's own checks, not the server's).
	RoleAny Role = "any"
)

// AccountUser is one password user of an account in [Accounts]. Its NATS
// user name is what Nats-Request-Info's "user" carries.
type AccountUser struct {
	Name     string
	Password string
	Role     Role
}

// Accounts describes the accounts of a tenant plane (docs/OPERATIONS.md,
// "Tenants and identity"): the brokers' account SIGNOFF with JetStream,
// exporting Signoff's services and the per-tenant streams, and one account
// per tenant importing them with share:true (so the server stamps every
// request with Nats-Request-Info) and its own streams mapped back to the
// plain subjects.
type Accounts struct {
	// Prefix is the subject prefix (default "signoff.v1").
	Prefix string
	// Brokers are the users of the SIGNOFF account (default: one user
	// "broker", password "broker").
	Brokers []AccountUser
	// Tenants maps a tenant account name to its users.
	Tenants map[string][]AccountUser
	// Operator runs the servers in operator mode: the same accounts and
	// users as JWTs of a fresh operator, a MEMORY resolver preloaded with
	// the accounts, users authenticated by their JWT and nkey (passwords
	// are not used). Accounts and users are then named by their public
	// keys: see [NATSCluster.Key].
	Operator bool
	// FullResolver, with Operator, serves the accounts from each server's
	// full NATS resolver (`resolver: {type: full}`, a JWT directory per
	// server) instead of MEMORY: only the system account is preloaded; the
	// others are pushed once the cluster is up, as `nsc push` does, by a
	// system-account user publishing each account JWT on
	// $SYS.REQ.CLAIMS.UPDATE, and NATSAccountsCluster returns when every
	// server acknowledged every push.
	FullResolver bool
	// Deferred, with FullResolver, are tenants whose accounts are signed
	// (their keys and users' credentials known from the start) but pushed
	// only by [NATSCluster.PushAccount]: a tenant added to a running plane.
	Deferred []string
}

func (a Accounts) prefix() string {
	if a.Prefix == "" {
		return "signoff.v1"
	}
	return a.Prefix
}

// serviceSubjects are the services SIGNOFF exports, by the role allowed to
// publish them.
func (a Accounts) serviceSubjects() map[Role][]string {
	p := a.prefix()
	return map[Role][]string{
		RoleAgent: {p + ".req.>", p + ".status.>", p + ".cancel.>", p + ".turn.>"},
		RoleBot:   {p + ".respond", p + ".people", p + ".pending.>", p + ".admin.>"},
		RoleAdmin: {p + ".admin.>"},
	}
}

// streamKinds are the broker → tenant subjects, exported per tenant.
var streamKinds = []string{"decision", "ask", "resolved"}

// Config returns the accounts block of a nats-server configuration.
func (a Accounts) Config() string {
	p := a.prefix()
	var b strings.Builder
	b.WriteString("accounts {\n")
	// The tenant's account name is the token after "<prefix>.t.".
	tokenPos := strings.Count(p, ".") + 3
	brokers := a.Brokers
	if len(brokers) == 0 {
		brokers = []AccountUser{{Name: "broker", Password: "broker", Role: RoleAny}}
	}
	fmt.Fprintf(&b, "  %s {\n    jetstream: enabled\n    users: [\n", BrokersAccount)
	for _, u := range brokers {
		fmt.Fprintf(&b, "      {user: %q, password: %q}\n", u.Name, u.Password)
	}
	b.WriteString("    ]\n    exports: [\n")
	seen := map[string]bool{}
	for _, subjects := range a.serviceSubjects() {
		for _, s := range subjects {
			if !seen[s] {
				seen[s] = true
				fmt.Fprintf(&b, "      {service: %q}\n", s)
			}
		}
	}
	for _, kind := range streamKinds {
		fmt.Fprintf(&b, "      {stream: %q, account_token_position: %d}\n", p+".t.*."+kind+".>", tokenPos)
	}
	b.WriteString("    ]\n  }\n")
	for _, name := range a.tenantNames() {
		a.writeTenant(&b, name)
	}
	b.WriteString("}\n")
	return b.String()
}

func (a Accounts) tenantNames() []string {
	names := make([]string, 0, len(a.Tenants))
	for n := range a.Tenants {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (a Accounts) writeTenant(b *strings.Builder, name string) {
	p := a.prefix()
	services := a.serviceSubjects()
	fmt.Fprintf(b, "  %s {\n    users: [\n", name)
	for _, u := range a.Tenants[name] {
		fmt.Fprintf(b, "      {user: %q, password: %q%s}\n", u.Name, u.Password, permissions(services, u.Role))
	}
	b.WriteString("    ]\n    imports: [\n")
	seen := map[string]bool{}
	for _, subjects := range services {
		for _, s := range subjects {
			if !seen[s] {
				seen[s] = true
				fmt.Fprintf(b, "      {service: {account: %s, subject: %q}, share: true}\n", BrokersAccount, s)
			}
		}
	}
	for _, kind := range streamKinds {
		fmt.Fprintf(b, "      {stream: {account: %s, subject: %q}, to: %q}\n",
			BrokersAccount, p+".t."+name+"."+kind+".>", p+"."+kind+".>")
	}
	b.WriteString("    ]\n  }\n")
}

// permissions is the user's publish allow-list: its role's services and
// replies (a request's reply subject is allowed for one response).
func permissions(services map[Role][]string, role Role) string {
	if role == RoleAny {
		return ""
	}
	allow := services[role]
	if allow == nil {
		allow = []string{}
	}
	quoted := make([]string, len(allow))
	for i, s := range allow {
		quoted[i] = strconv.Quote(s)
	}
	return fmt.Sprintf(", permissions: {publish: {allow: [%s]}, allow_responses: true}", strings.Join(quoted, ", "))
}

// NATSCluster is a cluster of embedded NATS servers for one test.
type NATSCluster struct {
	Servers []*server.Server

	// keys and creds are the operator mode's public keys by name and
	// users' credentials (nil in config-file mode).
	keys  map[string]string
	creds map[string]nats.Option
	oc    *operatorConf
}

// ClientURL returns the client URL of server i.
func (c *NATSCluster) ClientURL(i int) string {
	return "nats://" + c.Servers[i].Addr().String()
}

// ClientURLs returns every server's client URL, comma-separated (for
// nats.Connect).
func (c *NATSCluster) ClientURLs() string {
	urls := make([]string, len(c.Servers))
	for i := range c.Servers {
		urls[i] = c.ClientURL(i)
	}
	return strings.Join(urls, ",")
}

// Connect connects to server i as user/password (in operator mode, as
// user with its JWT and nkey) and registers the connection's Close with
// t.Cleanup.
func (c *NATSCluster) Connect(t testing.TB, i int, user, password string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	auth := nats.UserInfo(user, password)
	if c.creds != nil {
		var ok bool
		if auth, ok = c.creds[user]; !ok {
			t.Fatalf("testenv: no user %q in the operator's accounts", user)
		}
	}
	opts = append([]nats.Option{auth}, opts...)
	nc, err := nats.Connect(c.ClientURL(i), opts...)
	if err != nil {
		t.Fatalf("testenv: nats connect %s as %s: %v", c.ClientURL(i), user, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Creds is the connect option of user in operator mode (its JWT and
// nkey); in config-file mode, a user name with no password.
func (c *NATSCluster) Creds(user string) nats.Option {
	if o, ok := c.creds[user]; ok {
		return o
	}
	return nats.UserInfo(user, "")
}

// NATSAccountsCluster starts n embedded NATS servers (n ≥ 1; n > 1 forms a
// cluster with JetStream replicated) configured with accounts, on free
// loopback ports, and registers their shutdown with t.Cleanup. It waits
// until each accepts connections and, for a cluster, until every route is
// up.
func NATSAccountsCluster(t testing.TB, n int, accounts Accounts) *NATSCluster {
	t.Helper()
	c := &NATSCluster{}
	dir := t.TempDir()
	accountsConf := func(string, int) string { return accounts.Config() }
	var oc *operatorConf
	if accounts.Operator {
		var err error
		if oc, err = accounts.operatorMode(dir); err != nil {
			t.Fatalf("testenv: operator mode: %v", err)
		}
		c.keys, c.creds, c.oc = oc.keys, oc.creds, oc
		accountsConf = func(run string, i int) string {
			return oc.serverText(filepath.Join(run, fmt.Sprintf("jwt-%d", i)))
		}
	}
	// The route ports are chosen before the servers start, so another
	// process may bind one first: a server that cannot listen is a reason
	// to start the whole cluster again on other ports, not to fail.
	const attempts = 3
	for i := 1; ; i++ {
		run := filepath.Join(dir, fmt.Sprintf("run-%d", i))
		err := c.start(t, n, run, accountsConf)
		if err == nil {
			break
		}
		c.shutdown()
		if i == attempts || !errors.Is(err, errListen) {
			t.Fatalf("testenv: %v", err)
		}
	}
	c.waitRoutes(t)
	if oc != nil && len(oc.push) > 0 {
		if err := c.pushAccounts(oc, oc.push); err != nil {
			t.Fatalf("testenv: push accounts to the full resolver: %v", err)
		}
	}
	return c
}

// errListen marks a server that could not bind one of its ports.
var errListen = errors.New("a listener could not bind its port")

// start starts n servers keeping their files under run and waits until
// each accepts connections; on error the servers started so far are in
// c.Servers, for shutdown.
func (c *NATSCluster) start(t testing.TB, n int, run string, accountsConf func(string, int) string) error {
	c.Servers = nil
	routePorts := make([]int, n)
	for i := range routePorts {
		p, err := freePort()
		if err != nil {
			return fmt.Errorf("free port: %w", err)
		}
		routePorts[i] = p
	}
	if err := os.MkdirAll(run, 0o700); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		conf := natsConf(i, n, routePorts, filepath.Join(run, fmt.Sprintf("js-%d", i)), accountsConf(run, i))
		path := filepath.Join(run, fmt.Sprintf("nats-%d.conf", i))
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return err
		}
		o, err := server.ProcessConfigFile(path)
		if err != nil {
			return fmt.Errorf("nats config %s: %v\n%s", path, err, conf)
		}
		o.NoLog, o.NoSigs = true, true
		srv, err := server.NewServer(o)
		if err != nil {
			return fmt.Errorf("nats server %d: %v", i, err)
		}
		log := &errorLog{}
		srv.SetLogger(log, false, false)
		go srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		c.Servers = append(c.Servers, srv)
		if !srv.ReadyForConnections(natsReadyTimeout) {
			return log.notReady(i)
		}
	}
	return nil
}

func (c *NATSCluster) shutdown() {
	for _, s := range c.Servers {
		s.Shutdown()
		s.WaitForShutdown()
	}
	c.Servers = nil
}

func natsConf(i, n int, routePorts []int, storeDir, accounts string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: n%d\nhost: 127.0.0.1\nport: -1\n", i)
	fmt.Fprintf(&b, "jetstream {store_dir: %q}\n", storeDir)
	if n > 1 {
		routes := make([]string, 0, n)
		for j, p := range routePorts {
			if j != i {
				routes = append(routes, strconv.Quote("nats://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(p))))
			}
		}
		fmt.Fprintf(&b, "cluster {name: signoff, listen: \"127.0.0.1:%d\", routes: [%s]}\n",
			routePorts[i], strings.Join(routes, ", "))
	}
	b.WriteString(accounts)
	return b.String()
}

func (c *NATSCluster) waitRoutes(t testing.TB) {
	t.Helper()
	want := len(c.Servers) - 1
	if want == 0 {
		return
	}
	deadline := time.Now().Add(natsReadyTimeout)
	for time.Now().Before(deadline) {
		ok := true
		for _, s := range c.Servers {
			if s.NumRoutes() < want {
				ok = false
			}
		}
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("testenv: nats cluster routes not up within %v", natsReadyTimeout)
}
