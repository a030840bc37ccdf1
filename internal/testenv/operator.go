package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// operatorConf is the operator-mode equivalent of [Accounts.Config]: the
// same accounts, exports, imports and user permissions as JWTs signed by a
// fresh operator and its accounts, served by a MEMORY resolver preloaded
// with every account (docs/OPERATIONS.md, "Operator mode"). Accounts are
// named by their public keys (A…), users by theirs (U…), exactly as a
// server in operator mode names them in Nats-Request-Info; keys maps each
// account and user name of a to its public key, and creds each user name
// to the connect option carrying its JWT and seed.
type operatorConf struct {
	// text is the configuration every server shares; with a full resolver
	// its resolver block names the server's own JWT directory (%s).
	text  string
	keys  map[string]string
	creds map[string]nats.Option
	// push are the account JWTs a full resolver is sent after start (nil
	// with MEMORY, which preloads them all); later are those of
	// Accounts.Deferred, by tenant name, for NATSCluster.PushAccount.
	push  []string
	later map[string]string
}

// sysUser is the system-account user that pushes accounts to a full
// resolver.
const sysUser = "sys"

// serverText is the accounts part of one server's configuration: jwtDir
// is its full resolver's directory.
func (oc *operatorConf) serverText(jwtDir string) string {
	return strings.Replace(oc.text, "%JWTDIR%", strconv.Quote(jwtDir), 1)
}

// opAccount is an account of the operator being built, with its users.
type opAccount struct {
	name   string
	kp     nkeys.KeyPair
	claims *jwt.AccountClaims
	users  []AccountUser
}

// newOpAccount makes an account named name and records its key in oc.
func (oc *operatorConf) newOpAccount(name string, users []AccountUser) (*opAccount, error) {
	kp, err := nkeys.CreateAccount()
	if err != nil {
		return nil, err
	}
	pub, _ := kp.PublicKey()
	c := jwt.NewAccountClaims(pub)
	c.Name = name
	oc.keys[name] = pub
	return &opAccount{name: name, kp: kp, claims: c, users: users}, nil
}

// operatorMode builds the operator, the system account, SIGNOFF and the
// tenants' accounts, and their users.
func (a Accounts) operatorMode(dir string) (*operatorConf, error) {
	oc := &operatorConf{keys: map[string]string{}, creds: map[string]nats.Option{}, later: map[string]string{}}
	opKP, err := nkeys.CreateOperator()
	if err != nil {
		return nil, err
	}
	opPub, _ := opKP.PublicKey()
	op := jwt.NewOperatorClaims(opPub)
	op.Name = "signoff-test"
	var sysUsers []AccountUser
	if a.FullResolver {
		sysUsers = []AccountUser{{Name: sysUser, Role: RoleAny}}
	}
	sys, err := oc.newOpAccount("SYS", sysUsers)
	if err != nil {
		return nil, err
	}
	op.SystemAccount = sys.claims.Subject
	accounts, err := a.operatorAccounts(oc)
	if err != nil {
		return nil, err
	}
	accounts = append([]*opAccount{sys}, accounts...)

	opJWT, err := op.Encode(opKP)
	if err != nil {
		return nil, fmt.Errorf("operator jwt: %w", err)
	}
	opPath := filepath.Join(dir, "operator.jwt")
	if err := os.WriteFile(opPath, []byte(opJWT), 0o600); err != nil {
		return nil, err
	}
	var b strings.Builder
	resolver := "MEMORY"
	if a.FullResolver {
		resolver = "{type: full, dir: %JWTDIR%, allow_delete: false}"
	}
	fmt.Fprintf(&b, "operator: %q\nsystem_account: %s\nresolver: %s\nresolver_preload: {\n", opPath, sys.claims.Subject, resolver)
	for _, acc := range accounts {
		token, err := acc.claims.Encode(opKP)
		if err != nil {
			return nil, fmt.Errorf("account %s jwt: %w", acc.name, err)
		}
		switch {
		case a.FullResolver && slices.Contains(a.Deferred, acc.name):
			oc.later[acc.name] = token
		case a.FullResolver && acc != sys:
			oc.push = append(oc.push, token)
		default:
			fmt.Fprintf(&b, "  %s: %q\n", acc.claims.Subject, token)
		}
		for _, u := range acc.users {
			if err := oc.addUser(acc.kp, u, a.serviceSubjects()); err != nil {
				return nil, fmt.Errorf("user %s of %s: %w", u.Name, acc.name, err)
			}
		}
	}
	b.WriteString("}\n")
	oc.text = b.String()
	return oc, nil
}

// operatorAccounts are SIGNOFF, with JetStream and its exports, and each
// tenant's account importing them, as [Accounts.Config] writes them.
func (a Accounts) operatorAccounts(oc *operatorConf) ([]*opAccount, error) {
	brokerUsers := a.Brokers
	if len(brokerUsers) == 0 {
		brokerUsers = []AccountUser{{Name: "broker", Role: RoleAny}}
	}
	brokers, err := oc.newOpAccount(BrokersAccount, brokerUsers)
	if err != nil {
		return nil, err
	}
	brokers.claims.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	p := a.prefix()
	serviceList := uniqueServices(a.serviceSubjects())
	for _, s := range serviceList {
		brokers.claims.Exports.Add(&jwt.Export{Type: jwt.Service, Subject: jwt.Subject(s)})
	}
	tokenPos := uint(strings.Count(p, ".") + 3)
	for _, kind := range streamKinds {
		brokers.claims.Exports.Add(&jwt.Export{Type: jwt.Stream, Subject: jwt.Subject(p + ".t.*." + kind + ".>"), AccountTokenPosition: tokenPos})
	}
	out := []*opAccount{brokers}
	for _, name := range a.tenantNames() {
		acc, err := oc.newOpAccount(name, a.Tenants[name])
		if err != nil {
			return nil, err
		}
		for _, s := range serviceList {
			acc.claims.Imports.Add(&jwt.Import{Type: jwt.Service, Account: brokers.claims.Subject, Subject: jwt.Subject(s), Share: true})
		}
		for _, kind := range streamKinds {
			acc.claims.Imports.Add(&jwt.Import{Type: jwt.Stream, Account: brokers.claims.Subject,
				Subject:      jwt.Subject(p + ".t." + acc.claims.Subject + "." + kind + ".>"),
				LocalSubject: jwt.RenamingSubject(p + "." + kind + ".>")})
		}
		out = append(out, acc)
	}
	return out, nil
}

// addUser signs a user JWT with the account's key: the role's publish
// allow-list and one response per request, as [permissions] writes them
// for a config file.
func (oc *operatorConf) addUser(accKP nkeys.KeyPair, u AccountUser, services map[Role][]string) error {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return err
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	c := jwt.NewUserClaims(pub)
	c.Name = u.Name
	if u.Role != RoleAny {
		c.Pub.Allow.Add(services[u.Role]...)
		if len(services[u.Role]) == 0 {
			// An empty allow list is no restriction: deny everything instead.
			c.Pub.Deny.Add(">")
		}
		c.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: 2 * time.Minute}
	}
	token, err := c.Encode(accKP)
	if err != nil {
		return err
	}
	oc.keys[u.Name] = pub
	oc.creds[u.Name] = nats.UserJWTAndSeed(token, string(seed))
	return nil
}

// uniqueServices lists the exported service subjects once each, sorted.
func uniqueServices(services map[Role][]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, subjects := range services {
		for _, s := range subjects {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Key is how the server names an account or a user of the cluster's
// [Accounts] in Nats-Request-Info and subjects: its public key in
// operator mode, its name in config-file mode.
func (c *NATSCluster) Key(name string) string {
	if k, ok := c.keys[name]; ok {
		return k
	}
	return name
}

// Operator reports whether the cluster runs in operator mode.
func (c *NATSCluster) Operator() bool { return c.creds != nil }

// KeyReplacer rewrites account and user names to [NATSCluster.Key] in a
// text, such as a tenants file: longest names first, so that no name is
// rewritten inside a longer one.
func (c *NATSCluster) KeyReplacer() *strings.Replacer {
	names := make([]string, 0, len(c.keys))
	for n := range c.keys {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	var pairs []string
	for _, n := range names {
		pairs = append(pairs, n, c.keys[n])
	}
	return strings.NewReplacer(pairs...)
}

// PushAccount pushes the account of tenant, one of Accounts.Deferred, to
// the running cluster's full resolvers and returns once every server has
// it: from then on its users connect.
func (c *NATSCluster) PushAccount(t testing.TB, tenant string) {
	t.Helper()
	token, ok := "", false
	if c.oc != nil {
		token, ok = c.oc.later[tenant]
	}
	if !ok {
		t.Fatalf("testenv: %q is not a deferred tenant of a full-resolver cluster", tenant)
	}
	if err := c.pushAccounts(c.oc, []string{token}); err != nil {
		t.Fatalf("testenv: push account %s: %v", tenant, err)
	}
}

// pushAccounts sends each account JWT of tokens to the cluster's full
// resolvers on $SYS.REQ.CLAIMS.UPDATE, as a system-account user (what
// `nsc push` does), and waits until every server answered code 200 for
// every account: each server's resolver answers the update for itself.
func (c *NATSCluster) pushAccounts(oc *operatorConf, tokens []string) error {
	nc, err := nats.Connect(c.ClientURL(0), oc.creds[sysUser])
	if err != nil {
		return fmt.Errorf("connect as the system user: %w", err)
	}
	defer nc.Close()
	for _, token := range tokens {
		inbox := nats.NewInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			return err
		}
		if err := nc.PublishRequest("$SYS.REQ.CLAIMS.UPDATE", inbox, []byte(token)); err != nil {
			return err
		}
		for ok := 0; ok < len(c.Servers); {
			m, err := sub.NextMsg(natsReadyTimeout)
			if err != nil {
				return fmt.Errorf("%d of %d servers acknowledged an account: %w", ok, len(c.Servers), err)
			}
			var r struct {
				Data  struct{ Code int } `json:"data"`
				Error *struct {
					Code        int
					Description string
				} `json:"error"`
			}
			if err := json.Unmarshal(m.Data, &r); err != nil {
				return fmt.Errorf("claims update reply %q: %w", m.Data, err)
			}
			if r.Error != nil || r.Data.Code != 200 {
				return fmt.Errorf("claims update refused: %s", m.Data)
			}
			ok++
		}
		_ = sub.Unsubscribe()
	}
	return nil
}
