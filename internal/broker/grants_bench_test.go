package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// BenchmarkBrokerGrantAllow is the automatic path of a call that a standing
// grant allows: a session grant of "make deploy", then the same command
// again and again (the Lookup reads the grants; the rule checks them).
// docs/BENCHMARKS.md compares it with the code before grants were objects.
// Its sub-benchmarks grants=N decide the same kind of call against N
// standing grants of the agent (docs/BENCHMARKS.md "Cost against grants
// per agent"):
//
//	go test -run='^$' -bench='BrokerGrantAllow/grants=' -benchtime=2s ./internal/broker/
func BenchmarkBrokerGrantAllow(b *testing.B) {
	p := brokertest.Start(b, brokertest.Options{Replicas: 1, Redis: true})
	dev := p.Approver("default")
	c := p.Agent("s-bench", "pod-1")
	setup := brokertest.Ask(context.Background(), c, "grant-setup", "bash", brokertest.Bash("make deploy"))
	dev.Approve(dev.NextAsk("grant-setup"), "alice", messages.ScopeSession)
	brokertest.WantDecision(b, setup.Wait(b), messages.OutcomeAllow, messages.ReasonApproved)

	agent := p.NATS.Connect(b)
	granted := []byte(`"reason_code":"scope_grant"`)
	subject := p.Subjects.Req("s-bench")
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = benchRequest(fmt.Sprintf("%s-g%d", m.name, i), "make deploy")
			}
			benchLatencies(b, m.workers, func(i int) error {
				msg, err := agent.Request(subject, bodies[i], 5*time.Second)
				if err != nil {
					return err
				}
				if !bytes.Contains(msg.Data, granted) {
					return fmt.Errorf("receipt %s", msg.Data)
				}
				return nil
			})
		})
	}
	for _, n := range grantsPerAgent {
		benchGrantsPerAgent(b, p, agent, n)
	}
}

// grantsPerAgent are the numbers of standing agent grants
// BenchmarkBrokerGrantAllow/grants=N decides against (issue 31, item 5).
var grantsPerAgent = []int{1, 10, 100, 1000, 10000}

// benchGrantsPerAgent runs, one request at a time, a call that one agent
// grant allows ("make deploy" under always_prefix) while the agent holds n
// grants in all: besides that one, three in four are whole-tool grants of
// other tools and one in four a bash grant of another program ("prog<i>
// build *"), none of which applies to the call. The allowing grant is
// created in the middle. The grants are stored through the store's API,
// so the old and the new layout are measured alike.
func benchGrantsPerAgent(b *testing.B, p *brokertest.Plane, agent *nats.Conn, n int) {
	sess, agentID := fmt.Sprintf("s-g%d", n), fmt.Sprintf("pod-g%d", n)
	granted := []byte(`"reason_code":"scope_grant"`)
	subject := p.Subjects.Req(sess)
	var runs atomic.Int64
	b.Run(fmt.Sprintf("grants=%d", n), func(b *testing.B) {
		run := runs.Add(1)
		if run == 1 {
			populateAgentGrants(b, p, agentID, n)
		}
		bodies := make([][]byte, b.N)
		for i := range bodies {
			bodies[i] = benchRequestOf(fmt.Sprintf("g%d-%d-%d", n, run, i), sess, agentID, "make deploy")
		}
		benchLatencies(b, 1, func(i int) error {
			msg, err := agent.Request(subject, bodies[i], 10*time.Second)
			if err != nil {
				return err
			}
			if !bytes.Contains(msg.Data, granted) {
				return fmt.Errorf("receipt %s", msg.Data)
			}
			return nil
		})
	})
}

// populateAgentGrants stores n always grants of agentID (see
// benchGrantsPerAgent), four at a time, through a store of its own with a
// long OpTimeout (storing a grant in a long list took longer than the
// replicas' bound before grants were indexed).
func populateAgentGrants(b *testing.B, p *brokertest.Plane, agentID string, n int) {
	b.Helper()
	o := p.RedisOptions()
	o.OpTimeout = time.Minute
	st, err := redisstore.New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	grant := func(i int) session.Grant {
		g := session.Grant{Grant: messages.Grant{ID: fmt.Sprintf("gr_%s_%d", agentID, i), Scope: messages.ScopeAlways,
			AgentID: agentID, Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "alice"}},
			RequestID: fmt.Sprintf("r%d", i)}, Origin: "s-setup"}
		switch {
		case i == n/2:
			g.Scope, g.Tool, g.Patterns = messages.ScopeAlwaysPrefix, "bash", []string{"make deploy"}
		case i%4 == 0:
			g.Scope, g.Tool, g.Patterns = messages.ScopeAlwaysPrefix, "bash", []string{fmt.Sprintf("prog%d build *", i)}
		default:
			g.Tool = fmt.Sprintf("mcp__svc%d__op", i)
		}
		return g
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if _, _, _, err := st.AddGrant(context.Background(), grant(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func benchRequestOf(id, sess, agentID, cmd string) []byte {
	data, _ := json.Marshal(messages.Request{V: 1, RequestID: id, SessionID: sess, AgentID: agentID, Tool: "bash",
		Arguments: json.RawMessage(fmt.Sprintf(`{"command":%q}`, cmd))})
	return data
}
