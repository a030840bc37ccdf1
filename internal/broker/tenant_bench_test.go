package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// The automatic path's cost with identity on: the same server, Redis and
// policy; off, a broker without tenants and an agent in the brokers'
// account (declared); on, a plane and an agent of tenant ACME through the
// share:true import (verified: the header parsed, the identity checked).
// Serial requests, p50 reported:
//
//	go test -run='^$' -bench=BrokerIdentity -benchtime=3000x -count=5 ./internal/broker/
//
// (Off, ImportOnly, On and PlaneDeclared: see each.)

func BenchmarkBrokerIdentityOff(b *testing.B) { benchIdentity(b, identityOff) }
func BenchmarkBrokerIdentityOn(b *testing.B)  { benchIdentity(b, identityOn) }

// BenchmarkBrokerIdentityPlaneDeclared is the plane without the import: an
// agent in the brokers' account, served declared (allow_declared). Against
// Off it is the plane's own cost; against On, the NATS server's
// cross-account request (the import, the header it stamps, the reply's
// way back).
func BenchmarkBrokerIdentityPlaneDeclared(b *testing.B) { benchIdentity(b, identityPlaneDeclared) }

// BenchmarkBrokerIdentityImportOnly is a broker without tenants answering
// a tenant's agent through the same share:true import as On: the server's
// cross-account request with its Nats-Request-Info, which this broker
// does not read. On against it is what identity itself costs (the header
// parsed, the tenant and the identity looked up and checked, the
// tenant's subjects); it against Off is the import's cost, the NATS
// server's.
func BenchmarkBrokerIdentityImportOnly(b *testing.B) { benchIdentity(b, identityImportOnly) }

type identityMode int

const (
	identityOff identityMode = iota
	identityOn
	identityPlaneDeclared
	identityImportOnly
)

func benchIdentity(b *testing.B, mode identityMode) {
	c := testenv.NATSAccountsCluster(b, 1, testenv.Accounts{Tenants: tenantUsers})
	rds := testenv.Redis(b)
	pol, err := policy.Parse([]byte(tenantPolicy), "tenant-policy.yaml")
	if err != nil {
		b.Fatal(err)
	}
	base := broker.Config{Conn: c.Connect(b, 0, "broker", "broker"), StoreTimeout: time.Second, Logger: testLogger(), DisableReaper: true}
	openStore := func(ctx context.Context, prefix string) *redisstore.Store {
		rs, err := redisstore.New(ctx, redisstore.Options{URL: rds.URL(), KeyPrefix: prefix, OpTimeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = rs.Close() })
		return rs
	}
	var agent *nats.Conn
	var agentID, agentType string
	if mode != identityOff {
		text := tenantsFile
		if mode == identityPlaneDeclared {
			text += "allow_declared: true\n"
		}
		f, err := tenancy.Parse([]byte(text))
		if err != nil {
			b.Fatal(err)
		}
		p, err := broker.NewPlane(broker.PlaneConfig{Base: base, Tenants: f,
			Open: func(ctx context.Context, t *tenancy.Tenant) (broker.TenantParts, error) {
				prefix := "signoff"
				if t != nil {
					prefix = "signoff:t:" + t.ID
				}
				return broker.TenantParts{Store: openStore(ctx, prefix), Policy: broker.StaticPolicy{P: pol}}, nil
			}})
		if err != nil {
			b.Fatal(err)
		}
		brokertest.Run(b, "plane", p.Run)
		for p.Ready(context.Background()) != nil {
			time.Sleep(10 * time.Millisecond)
		}
		agent, agentID, agentType = c.Connect(b, 0, "acme-agent", "pw"), "coder", "claude-code"
		if mode == identityPlaneDeclared {
			agent = c.Connect(b, 0, "broker", "broker")
		}
	} else {
		cfg := base
		cfg.Store, cfg.Policy = openStore(context.Background(), "signoff"), broker.StaticPolicy{P: pol}
		br, err := broker.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		brokertest.Run(b, "broker", br.Run)
		for br.Ready(context.Background()) != nil {
			time.Sleep(10 * time.Millisecond)
		}
		agent, agentID = c.Connect(b, 0, "broker", "broker"), "coder"
		if mode == identityImportOnly {
			agent, agentType = c.Connect(b, 0, "acme-agent", "pw"), "claude-code"
		}
	}
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	benchLatencies(b, 1, func(i int) error {
		data, _ := json.Marshal(map[string]any{"v": 1, "request_id": fmt.Sprintf("%s-%d", run, i), "session_id": "shared-1",
			"agent_id": agentID, "agent_type": agentType, "tool": "bash", "arguments": map[string]any{"command": "ls"}})
		reply, err := agent.Request("signoff.v1.req.shared-1", data, 5*time.Second)
		if err != nil {
			return err
		}
		if !json.Valid(reply.Data) || len(reply.Data) < 40 || string(reply.Data[:20]) == `{"v":1,"error":{"cod` {
			return fmt.Errorf("reply %s", reply.Data)
		}
		return nil
	})
}
