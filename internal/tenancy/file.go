package tenancy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/gobwas/glob"
	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// File is a parsed and validated tenants file (--tenants FILE).
type File struct {
	// Path is the file it was read from.
	Path string `yaml:"-"`
	// Tenants are the tenants, by their NATS accounts.
	Tenants []*Tenant `yaml:"tenants"`
	// AllowDeclared serves requests without Nats-Request-Info (from the
	// brokers' own account, or a plane without accounts) as the declared
	// tenant "default". Development only.
	AllowDeclared bool `yaml:"allow_declared"`

	byAccount map[string]*Tenant
}

// Tenant is one tenant: a NATS account with its own policy and state.
type Tenant struct {
	// ID names the tenant in keys and logs: Redis prefix signoff:t:<id>.
	ID string `yaml:"id"`
	// Account is the NATS account name (config-file mode) or account
	// public key (operator mode).
	Account string `yaml:"account"`
	// Policy is the tenant's policy file (relative paths are resolved
	// against the tenants file's directory); empty: the built-in policy.
	Policy string `yaml:"policy"`
	// Agents map NATS users to agent identities.
	Agents []*Identity `yaml:"agents"`
	// Bots are the users allowed to respond and replay pending questions.
	Bots []User `yaml:"bots"`
	// Admins are the users allowed on the admin subjects.
	Admins []User `yaml:"admins"`

	agents map[string]*Identity
	bots   map[string]bool
	admins map[string]bool
}

// User names a NATS user: Nats-Request-Info's "user" (an nkey or JWT
// public key, or a config-file user name).
type User struct {
	User string `yaml:"user"`
}

// Identity is what a NATS user is as an agent.
type Identity struct {
	// User is the NATS user.
	User string `yaml:"user"`
	// AgentID is the agent id its requests carry; Always grants attach to it.
	AgentID string `yaml:"agent_id"`
	// AgentTypes are the agent types it may declare (empty: any).
	AgentTypes []string `yaml:"agent_types"`
	// Sessions are the session id globs it may use (empty: any).
	Sessions []string `yaml:"sessions"`

	sessions []*glob.Pattern
}

// tenantID is what a tenant id may be: it names Redis keys and a
// JetStream key-value bucket.
var tenantID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// accountName is what a NATS account name (or public key) may be: one
// subject token of letters, digits, '_' and '-'.
var accountName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// Load reads and validates the tenants file at path. Errors name the file,
// the tenant and the field.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenants file: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("tenants file %s: %w", path, err)
	}
	f.Path = path
	dir := filepath.Dir(path)
	for _, t := range f.Tenants {
		if t.Policy != "" && !filepath.IsAbs(t.Policy) {
			t.Policy = filepath.Join(dir, t.Policy)
		}
	}
	return f, nil
}

// Parse decodes and validates a tenants file's contents.
func Parse(data []byte) (f *File, err error) {
	// yaml.v3 has panicked on hostile input: a bad file is an error.
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("unreadable YAML: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	f = &File{}
	if err := dec.Decode(f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file: list the tenants under tenants:")
		}
		return nil, err
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) validate() error {
	if len(f.Tenants) == 0 {
		return errors.New("tenants: none listed")
	}
	f.byAccount = make(map[string]*Tenant, len(f.Tenants))
	ids := map[string]bool{}
	for i, t := range f.Tenants {
		if t == nil {
			return fmt.Errorf("tenants[%d]: empty entry", i)
		}
		where := fmt.Sprintf("tenants[%d] (id %q)", i, t.ID)
		if !tenantID.MatchString(t.ID) {
			return fmt.Errorf("%s: id: must be 1–63 lower-case letters, digits, '_' or '-', starting with a letter or digit", where)
		}
		if t.ID == DeclaredTenant {
			return fmt.Errorf("%s: id: %q is the declared tenant's (allow_declared)", where, t.ID)
		}
		if ids[t.ID] {
			return fmt.Errorf("%s: id: listed twice", where)
		}
		ids[t.ID] = true
		if !accountName.MatchString(t.Account) {
			return fmt.Errorf("%s: account: %q is not a NATS account name or public key", where, t.Account)
		}
		if f.byAccount[t.Account] != nil {
			return fmt.Errorf("%s: account: %s is already tenant %q", where, t.Account, f.byAccount[t.Account].ID)
		}
		if err := t.index(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		f.byAccount[t.Account] = t
	}
	return nil
}

func (t *Tenant) index() error {
	t.agents = make(map[string]*Identity, len(t.Agents))
	for i, a := range t.Agents {
		if a == nil {
			return fmt.Errorf("agents[%d]: empty entry", i)
		}
		where := fmt.Sprintf("agents[%d]", i)
		if a.User == "" {
			return fmt.Errorf("%s.user: empty", where)
		}
		if t.agents[a.User] != nil {
			return fmt.Errorf("%s.user: %q is listed twice", where, a.User)
		}
		if err := messages.ValidateToken("agent_id", a.AgentID); err != nil {
			return fmt.Errorf("%s.agent_id: %w", where, err)
		}
		for j, at := range a.AgentTypes {
			if at == "" {
				return fmt.Errorf("%s.agent_types[%d]: empty", where, j)
			}
		}
		if len(a.Sessions) == 0 {
			// Closed by default: a session is shared state (its grants,
			// its stop, its turn), and sessions bind to no agent, so an
			// agent that may use any session may use another agent's.
			return fmt.Errorf("%s.sessions: empty: list the session ids (globs) agent %q may use, such as [%q]; "+
				"[\"*\"] lets it use every session of the tenant, other agents' included (their session grants, their stops)",
				where, a.AgentID, a.AgentID+"-*")
		}
		a.sessions = make([]*glob.Pattern, len(a.Sessions))
		for j, s := range a.Sessions {
			g, err := glob.Compile(s)
			if s == "" || err != nil {
				return fmt.Errorf("%s.sessions[%d]: %q is not a glob: %v", where, j, s, err)
			}
			a.sessions[j] = g
		}
		t.agents[a.User] = a
	}
	var err error
	if t.bots, err = userSet("bots", t.Bots); err != nil {
		return err
	}
	t.admins, err = userSet("admins", t.Admins)
	return err
}

func userSet(field string, users []User) (map[string]bool, error) {
	set := make(map[string]bool, len(users))
	for i, u := range users {
		if u.User == "" {
			return nil, fmt.Errorf("%s[%d].user: empty", field, i)
		}
		set[u.User] = true
	}
	return set, nil
}

// DeclaredTenant is the id of the tenant served without Nats-Request-Info:
// the only tenant of a broker without a tenants file, and the tenant of
// declared requests under allow_declared.
const DeclaredTenant = "default"

// ForAccount returns the tenant of a NATS account, or nil.
func (f *File) ForAccount(account string) *Tenant { return f.byAccount[account] }

// Agent returns the identity of a NATS user, or nil.
func (t *Tenant) Agent(user string) *Identity { return t.agents[user] }

// IsBot reports whether user may respond and replay pending questions.
func (t *Tenant) IsBot(user string) bool { return t.bots[user] }

// IsAdmin reports whether user may use the admin subjects.
func (t *Tenant) IsAdmin(user string) bool { return t.admins[user] }

// Resolve returns the tenant of a message from its Nats-Request-Info value
// ("" when the message has none) and the requester it names. A nil tenant
// with a nil error is the declared tenant (allow_declared). An unknown
// account, a malformed header, or a missing one without allow_declared is
// a [*ForbiddenError].
func (f *File) Resolve(header string) (*Tenant, RequestInfo, error) {
	if header == "" {
		if f.AllowDeclared {
			return nil, RequestInfo{}, nil
		}
		return nil, RequestInfo{}, forbidden("no %s header: this broker serves tenants by NATS account; connect with a tenant account's credentials", RequestInfoHeader)
	}
	ri, err := ParseRequestInfo(header)
	if err != nil {
		return nil, RequestInfo{}, forbidden("%v", err)
	}
	t := f.byAccount[ri.Account]
	if t == nil {
		return nil, ri, forbidden("account %q is not a tenant of this broker", ri.Account)
	}
	return t, ri, nil
}
