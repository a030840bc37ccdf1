package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Fleet is a set of agents, each a pkg/client Client of its own session,
// asking one request after the other.
type Fleet struct {
	// Conns are the NATS connections; agent i uses Conns[i%len(Conns)].
	Conns []*nats.Conn
	// Agents is the number of agents.
	Agents int
	// PerAgent is the number of requests of each agent; 0: until the
	// context given to Run ends.
	PerAgent int
	// Name names the scenario: sessions are <Name>-a<i>, request ids
	// <Name>-a<i>-r<n>, so every scenario has fresh ones.
	Name string
	// Mix picks the kind of agent's n-th request (default Mixed).
	Mix func(agent, n int) Kind
	// Ledger records every request.
	Ledger *Ledger
	// Options are more client options (the fleet sets session and agent,
	// a 1 s attempt timeout and a 1 s status interval).
	Options []client.Option
	// Gap is the pause between two requests of one agent.
	Gap time.Duration
	// Timeout bounds each request (default 60 s): a request still without
	// a decision then is recorded as lost.
	Timeout time.Duration
}

// Session returns the session id of agent i.
func (f *Fleet) Session(i int) string { return fmt.Sprintf("%s-a%d", f.Name, i) }

// Run runs the agents until each has sent PerAgent requests or issue ends,
// and returns when every request sent has its decision (or its Timeout
// passed). It returns an error only when an agent could not be set up.
func (f *Fleet) Run(issue context.Context) error {
	mix := f.Mix
	if mix == nil {
		mix = Mixed
	}
	timeout := f.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	clients := make([]*client.Client, f.Agents)
	for i := range clients {
		opts := append([]client.Option{
			client.WithSession(f.Session(i)),
			client.WithAgent(fmt.Sprintf("%s-pod%d", f.Name, i)),
			client.WithRequestedBy("agent-user"),
			client.WithAttemptTimeout(time.Second),
			client.WithStatusInterval(time.Second),
		}, f.Options...)
		c, err := client.New(f.Conns[i%len(f.Conns)], opts...)
		if err != nil {
			return fmt.Errorf("agent %d: %w", i, err)
		}
		clients[i] = c
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for n := 0; f.PerAgent == 0 || n < f.PerAgent; n++ {
				if issue.Err() != nil {
					return
				}
				kind := mix(i, n)
				call := CallFor(kind, fmt.Sprintf("a%d-r%d", i, n))
				call.RequestID = fmt.Sprintf("%s-r%d", c.SessionID(), n)
				f.Ledger.Begin(call.RequestID, c.SessionID(), fmt.Sprintf("%s-pod%d", f.Name, i), kind)
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				d, err := c.Request(ctx, call)
				cancel()
				f.Ledger.Finish(call.RequestID, d, err)
				if f.Gap > 0 {
					select {
					case <-issue.Done():
					case <-time.After(f.Gap):
					}
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// Observe records in l every decision published on the decision subjects
// (prefix.decision.>) for a session of the scenario (the session named
// scenario, or scenario-…) until the returned function is called.
// Decisions of other sessions are not this scenario's: an earlier
// scenario's outbox may still publish one of its decisions again after its
// traffic stopped (effects are at least once, docs/STATE.md), and that is
// no stray of this one.
func Observe(nc *nats.Conn, prefix, scenario string, l *Ledger) (stop func(), err error) {
	sub, err := nc.Subscribe(prefix+".decision.>", func(m *nats.Msg) {
		var d messages.Decision
		if json.Unmarshal(m.Data, &d) != nil {
			return
		}
		if d.SessionID == scenario || strings.HasPrefix(d.SessionID, scenario+"-") {
			l.Published(d)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("observe decisions: %w", err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, err
	}
	if err := nc.Flush(); err != nil {
		return nil, err
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
