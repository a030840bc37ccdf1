package tenancy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/tenancy"
)

const goodFile = `
tenants:
  - id: acme
    account: ACME
    policy: policy-acme.yaml
    agents:
      - user: acme-agent
        agent_id: acme-coder
        agent_types: [claude-code]
        sessions: ["acme-*"]
      - user: acme-any
        agent_id: acme-any
        sessions: ["*"]
    bots: [{user: acme-bot}]
    admins: [{user: acme-admin}]
  - id: globex
    account: GLOBEX
`

func load(t *testing.T, text string) *tenancy.File {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := tenancy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTenantsFileMapsAccountsAndUsersToTenantsAndRoles(t *testing.T) {
	f := load(t, goodFile)
	acme := f.ForAccount("ACME")
	if acme == nil || acme.ID != "acme" {
		t.Fatalf("ACME → %+v", acme)
	}
	if !filepath.IsAbs(acme.Policy) || filepath.Dir(acme.Policy) != filepath.Dir(f.Path) {
		t.Errorf("policy %q is not resolved against the file's directory", acme.Policy)
	}
	if id := acme.Agent("acme-agent"); id == nil || id.AgentID != "acme-coder" {
		t.Errorf("acme-agent → %+v", id)
	}
	if acme.Agent("acme-bot") != nil || !acme.IsBot("acme-bot") || acme.IsBot("acme-agent") {
		t.Error("bots are not kept apart from agents")
	}
	if !acme.IsAdmin("acme-admin") || acme.IsAdmin("acme-bot") {
		t.Error("admins are not kept apart from bots")
	}
	if f.ForAccount("acme") != nil || f.ForAccount("INITECH") != nil {
		t.Error("an account not in the file has a tenant")
	}
}

func TestTenantsFileErrorsNameTheFileTenantAndField(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no tenants", "tenants: []\n", "tenants: none listed"},
		{"unknown field", "tenants:\n  - id: a\n    account: A\n    agnets: []\n", "field agnets not found"},
		{"bad id", "tenants:\n  - id: Acme\n    account: A\n", `tenants[0] (id "Acme"): id:`},
		{"declared id", "tenants:\n  - id: default\n    account: A\n", "declared tenant"},
		{"duplicate id", "tenants:\n  - id: a\n    account: A\n  - id: a\n    account: B\n", `tenants[1] (id "a"): id: listed twice`},
		{"duplicate account", "tenants:\n  - id: a\n    account: A\n  - id: b\n    account: A\n", `account: A is already tenant "a"`},
		{"account with a dot", "tenants:\n  - id: a\n    account: A.B\n", "not a NATS account name"},
		{"agent without sessions", "tenants:\n  - id: a\n    account: A\n    agents: [{user: u, agent_id: x}]\n", "agents[0].sessions: empty"},
		{"agent without user", "tenants:\n  - id: a\n    account: A\n    agents: [{agent_id: x}]\n", "agents[0].user: empty"},
		{"agent id with a dot", "tenants:\n  - id: a\n    account: A\n    agents: [{user: u, agent_id: x.y}]\n", "agents[0].agent_id"},
		{"user twice", "tenants:\n  - id: a\n    account: A\n    agents: [{user: u, agent_id: x, sessions: [\"*\"]}, {user: u, agent_id: y, sessions: [\"*\"]}]\n", `agents[1].user: "u" is listed twice`},
		{"bad session glob", "tenants:\n  - id: a\n    account: A\n    agents: [{user: u, agent_id: x, sessions: ['[a']}]\n", "agents[0].sessions[0]"},
		{"bot without user", "tenants:\n  - id: a\n    account: A\n    bots: [{}]\n", "bots[0].user: empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tenants.yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := tenancy.Load(path)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %q and the file", err, tc.want)
			}
		})
	}
}

func TestIdentityCheckRefusesAnotherAgentTypeOrSession(t *testing.T) {
	acme := load(t, goodFile).ForAccount("ACME")
	coder, anyAgent := acme.Agent("acme-agent"), acme.Agent("acme-any")
	for _, tc := range []struct {
		name                string
		id                  *tenancy.Identity
		agent, typ, session string
		wantForbidden       string
	}{
		{"its own agent, type and session", coder, "acme-coder", "claude-code", "acme-1", ""},
		{"another agent id", coder, "acme-deployer", "claude-code", "acme-1", `agent_id "acme-deployer" is not this credential's agent`},
		{"a forbidden agent type", coder, "acme-coder", "codex", "acme-1", `may not use agent_type "codex"`},
		{"no agent type where types are listed", coder, "acme-coder", "", "acme-1", "must declare its agent_type"},
		{"another identity's session", coder, "acme-coder", "claude-code", "ops-1", `may not use session "ops-1"`},
		{"an unrestricted identity, any type and session", anyAgent, "acme-any", "codex", "ops-1", ""},
		{"an unrestricted identity, another agent id", anyAgent, "acme-coder", "", "s", "is not this credential's agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.id.Check(tc.agent, tc.typ, tc.session)
			if tc.wantForbidden == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *tenancy.ForbiddenError
			if !errors.As(err, &fe) || !strings.Contains(fe.Reason, tc.wantForbidden) {
				t.Fatalf("err = %v, want forbidden %q", err, tc.wantForbidden)
			}
		})
	}
}

func TestTenantResolvedFromRequestInfoOrRefused(t *testing.T) {
	f := load(t, goodFile)
	tn, ri, err := f.Resolve(`{"acc":"ACME","user":"acme-agent","name":"globex-agent","rtt":1000}`)
	if err != nil || tn.ID != "acme" || ri.User != "acme-agent" {
		t.Fatalf("Resolve = %v %+v %v", tn, ri, err)
	}
	for name, hdr := range map[string]string{
		"no header":       "",
		"unknown account": `{"acc":"INITECH","user":"x"}`,
		"no account":      `{"user":"acme-agent"}`,
		"not JSON":        `acc=ACME`,
	} {
		if _, _, err := f.Resolve(hdr); !errors.As(err, new(*tenancy.ForbiddenError)) {
			t.Errorf("%s: err = %v, want forbidden", name, err)
		}
	}
	f.AllowDeclared = true
	if tn, _, err := f.Resolve(""); tn != nil || err != nil {
		t.Errorf("allow_declared: Resolve(\"\") = %v, %v; want the declared tenant", tn, err)
	}
}

// BenchmarkParseRequestInfo parses a header as nats-server v2.15 writes it
// for a share:true import (detailed client info).
func BenchmarkParseRequestInfo(b *testing.B) {
	const hdr = `{"start":"2026-11-28T04:37:02.123456789Z","host":"10.0.3.17","id":4711,"acc":"ACME","user":"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4","name":"acme-agent-7","lang":"go","ver":"1.55.0","rtt":412000,"server":"n1","cluster":"signoff","kind":"Client","client_type":"nats"}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tenancy.ParseRequestInfo(hdr); err != nil {
			b.Fatal(err)
		}
	}
}
