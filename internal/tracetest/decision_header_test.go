package tracetest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/tracetest"
	"github.com/signoff-dev/signoff/internal/tracing"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
)

// TestDecisionsToTheAgentCarryTheRequestSpansTraceContext sends, over raw
// NATS with a traceparent of the agent's, an allowed call and an asked one
// that an approver approves, and checks that the receipt and the published
// decision each carry a traceparent naming the broker's request span (as
// the real collector received it) in the agent's trace.
func TestDecisionsToTheAgentCarryTheRequestSpansTraceContext(t *testing.T) {
	col := tracetest.Start(t)
	agentTP := provider(t, "test-agent", "http://"+col.HTTP, env{})
	brokerTP := provider(t, "signoff-broker", "http://"+col.HTTP, env{})
	p := brokertest.Start(t, brokertest.Options{Redis: true, Tracer: brokerTP.Tracer()})
	appr := p.Approver("default")
	nc := p.NATS.Connect(t)

	ctx, root := agentTP.Tracer().Start(context.Background(), "agent.turn")
	send := func(id, command string) *nats.Msg {
		t.Helper()
		data, _ := json.Marshal(messages.Request{V: messages.Version, RequestID: id, SessionID: "s-hdr", AgentID: "pod-1",
			CallID: id, Tool: "bash", Arguments: json.RawMessage(`{"command":"` + command + `"}`)})
		msg := &nats.Msg{Subject: p.Subjects.Req("s-hdr"), Data: data}
		natstrace.Inject(ctx, msg)
		rep, err := nc.RequestMsg(msg, 5*time.Second)
		if err != nil {
			t.Fatalf("request %s: %v", id, err)
		}
		return rep
	}

	allowed := send("r-allow", "ls -l")
	decisions, err := nc.SubscribeSync(p.Subjects.Decision("s-hdr", "r-ask"))
	if err != nil {
		t.Fatal(err)
	}
	pending := send("r-ask", "make deploy")
	if !strings.Contains(string(pending.Data), `"pending"`) {
		t.Fatalf("make deploy: %s, want pending", pending.Data)
	}
	appr.Approve(appr.NextAsk("r-ask"), "alice", messages.ScopeOnce)
	published, err := decisions.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no decision published for r-ask: %v", err)
	}
	root.End()
	for _, tp := range []*tracing.Provider{agentTP, brokerTP} {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatalf("flush spans: %v", err)
		}
	}
	spans := col.Wait(t, 30*time.Second, func(s []tracetest.Span) bool {
		return len(find(s, broker.SpanRequest, "")) == 2 && len(find(s, "agent.turn", "")) == 1
	})
	turn := one(t, spans, "agent.turn", "")
	for _, c := range []struct {
		name string
		msg  *nats.Msg
		id   string
	}{{"the allow's receipt", allowed, "r-allow"}, {"the pending receipt", pending, "r-ask"}, {"the published decision", published, "r-ask"}} {
		span := one(t, spans, broker.SpanRequest, c.id)
		want := "00-" + turn.TraceID + "-" + span.SpanID + "-01"
		if got := c.msg.Header.Get(natstrace.TraceParent); got != want {
			t.Errorf("%s: traceparent %q, want %q (the broker's request span in the agent's trace)", c.name, got, want)
		}
	}
}
