package admincli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/admincli"
	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

const tenantAuditTenants = `
tenants:
  - id: acme
    account: ACME
    agents:
      - {user: acme-agent, agent_id: coder, sessions: ["*"]}
    admins: [{user: acme-admin}]
`

// startTenantAuditPlane starts a one-node NATS with the brokers' account
// and tenant ACME, a redis-server and a plane broker, and returns the
// cluster.
func startTenantAuditPlane(t *testing.T) *testenv.NATSCluster {
	t.Helper()
	c := testenv.NATSAccountsCluster(t, 1, testenv.Accounts{Tenants: map[string][]testenv.AccountUser{
		"ACME": {{Name: "acme-agent", Password: "pw", Role: testenv.RoleAgent}, {Name: "acme-admin", Password: "pw", Role: testenv.RoleAdmin}},
	}})
	rds := testenv.Redis(t)
	pol, err := policy.Parse([]byte(brokertest.DefaultPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := tenancy.Parse([]byte(tenantAuditTenants))
	if err != nil {
		t.Fatal(err)
	}
	p, err := broker.NewPlane(broker.PlaneConfig{
		Base:    broker.Config{Conn: c.Connect(t, 0, "broker", "broker"), Replica: "plane-0", StoreTimeout: time.Second},
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
	brokertest.Run(t, "plane", p.Run)
	for deadline := time.Now().Add(30 * time.Second); p.Ready(context.Background()) != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("plane not ready: %v", p.Ready(context.Background()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c
}

// auditAs runs `signoff admin audit` as the plane's broker user (the
// operator, who may read the stream) with args, and returns the request
// ids and tenants of the JSON lines it prints.
func auditAs(t *testing.T, c *testenv.NATSCluster, args ...string) map[string]string {
	t.Helper()
	var out, errw strings.Builder
	full := append([]string{"audit", "--nats", c.ClientURL(0), "--nats-user", "broker", "--nats-password", "broker", "--json"}, args...)
	if code := admincli.Run(t.Context(), full, &out, &errw); code != admincli.ExitOK {
		t.Fatalf("signoff admin %s: exit %d, stderr %q", strings.Join(full, " "), code, errw.String())
	}
	got := map[string]string{}
	for line := range strings.Lines(out.String()) {
		var r struct {
			Tenant  string `json:"tenant"`
			Request struct {
				RequestID string `json:"request_id"`
			} `json:"request"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		got[r.Request.RequestID] = r.Tenant
	}
	return got
}

func TestTenantAuditRecordsAreListedWithTenantAndNotWithout(t *testing.T) {
	c := startTenantAuditPlane(t)
	agent, err := client.New(c.Connect(t, 0, "acme-agent", "pw"), client.WithSession("acme-s1"), client.WithAgent("coder"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Request(t.Context(), client.Call{RequestID: "req-acme-ls", Tool: "bash", Arguments: brokertest.Bash("ls")}); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; {
		got = auditAs(t, c, "--tenant", "ACME")
		if len(got) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tenant, ok := got["req-acme-ls"]; !ok || tenant != "ACME" || len(got) != 1 {
		t.Fatalf("audit --tenant ACME = %v, want req-acme-ls of ACME only", got)
	}
	if got := auditAs(t, c, "--tenant", "ACME", "--session", "acme-s1"); got["req-acme-ls"] != "ACME" {
		t.Errorf("audit --tenant ACME --session acme-s1 = %v, want req-acme-ls", got)
	}
	if got := auditAs(t, c); len(got) != 0 {
		t.Errorf("audit without --tenant = %v, want nothing (the plain subjects hold no record)", got)
	}
	if got := auditAs(t, c, "--tenant", "GLOBEX"); len(got) != 0 {
		t.Errorf("audit --tenant GLOBEX = %v, want nothing", got)
	}
	if got := auditAs(t, c, "--all-tenants"); got["req-acme-ls"] != "ACME" {
		t.Errorf("audit --all-tenants = %v, want req-acme-ls of ACME", got)
	}

	// Replay reads the tenant's records with --tenant only.
	file := filepath.Join(t.TempDir(), "candidate.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(brokertest.DefaultPolicy, `action: allow`, `action: deny`)), 0o600); err != nil {
		t.Fatal(err)
	}
	replayed := func(args ...string) (int, string) {
		var out, errw strings.Builder
		full := append([]string{"replay", "--nats", c.ClientURL(0), "--nats-user", "broker", "--nats-password", "broker",
			"--policy", file, "--since", "1h", "--json"}, args...)
		code := admincli.Run(t.Context(), full, &out, &errw)
		return code, out.String() + errw.String()
	}
	if code, out := replayed("--tenant", "ACME"); code != 1 || !strings.Contains(out, `"req-acme-ls"`) {
		t.Errorf("replay --tenant ACME: exit %d, %s; want exit 1 naming req-acme-ls (allow→deny)", code, out)
	}
	if code, out := replayed(); code != 0 || strings.Contains(out, "req-acme-ls") {
		t.Errorf("replay without --tenant: exit %d, %s; want exit 0, nothing replayed", code, out)
	}
}

func TestTenantFlagsAreCheckedBeforeAnythingIsRead(t *testing.T) {
	for _, args := range [][]string{
		{"audit", "--tenant", "ACME", "--all-tenants"},
		{"audit", "--tenant", "AC.ME"},
		{"replay", "--policy", "x.yaml", "--tenant", "A*"},
	} {
		var out, errw strings.Builder
		full := append(args, "--nats", "nats://127.0.0.1:1")
		if code := admincli.Run(t.Context(), full, &out, &errw); code != admincli.ExitUsage || !strings.Contains(errw.String(), "tenant") {
			t.Errorf("signoff admin %s: exit %d, stderr %q; want usage (2) naming the tenant flag", strings.Join(args, " "), code, errw.String())
		}
	}
}
