package tracetest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	// The terminal channel's kind, which the bot's config names (the
	// test's own channel stands in for it).
	_ "github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/internal/tracetest"
	"github.com/signoff-dev/signoff/internal/tracing"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// env is a fake environment for tracing.Setup.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// provider sets up the OTLP export of one process of the test to col.
func provider(t *testing.T, service, endpoint string, e env) *tracing.Provider {
	t.Helper()
	p, err := tracing.Setup(context.Background(), tracing.Config{Endpoint: endpoint, Service: service, Getenv: e.get})
	if err != nil || p == nil {
		t.Fatalf("tracing.Setup(%s): %v, %v", endpoint, p, err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// approveAll is a channel that approves every question it is shown, as
// alice, once.
type approveAll struct {
	mu sync.Mutex
	r  approverbot.Responder
	ok chan error
}

func (a *approveAll) Name() string { return "test" }
func (a *approveAll) Run(ctx context.Context, r approverbot.Responder) error {
	a.mu.Lock()
	a.r = r
	a.mu.Unlock()
	<-ctx.Done()
	return nil
}
func (a *approveAll) Ask(ctx context.Context, q approverbot.Question) error {
	a.mu.Lock()
	r := a.r
	a.mu.Unlock()
	go func() {
		_, err := r.Respond(context.Background(), approverbot.Answer{RequestID: q.Request.RequestID, Approver: "alice",
			Channel: "test", Choice: approverbot.ChoiceOnce})
		a.ok <- err
	}()
	return nil
}
func (a *approveAll) Resolve(context.Context, messages.Resolved) error { return nil }
func (a *approveAll) CheckHealth(context.Context) error                { return nil }

func runBot(t *testing.T, p *brokertest.Plane, tp *tracing.Provider, ch *approveAll) {
	t.Helper()
	cfg, err := approverbot.ParseConfig([]byte("teams: [default]\napprovers:\n  alice: {}\nterminal: {approver: alice}\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), []approverbot.Channel{ch}, approverbot.Options{Tracer: tp.Tracer()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestTheDecisionPathArrivesAtARealCollectorAsOneLinkedTrace sends an
// allowed call and an asked one through a broker on real Redis, from an
// agent whose trace context rides in the NATS headers, approved by a bot,
// and checks at a real OpenTelemetry Collector that every step is a span
// of the agent's trace with the right parent and attributes.
func TestTheDecisionPathArrivesAtARealCollectorAsOneLinkedTrace(t *testing.T) {
	col := tracetest.Start(t)
	// The agent exports over gRPC, the broker and the bot over HTTP: both
	// protocols of tracing.Setup reach the collector.
	agentTP := provider(t, "test-agent", "http://"+col.GRPC, env{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
	brokerTP := provider(t, "signoff-broker", "http://"+col.HTTP, env{})
	botTP := provider(t, "signoff-approver-bot", "http://"+col.HTTP, env{})

	p := brokertest.Start(t, brokertest.Options{Redis: true, Tracer: brokerTP.Tracer()})
	ch := &approveAll{ok: make(chan error, 1)}
	runBot(t, p, botTP, ch)
	time.Sleep(200 * time.Millisecond) // the bot subscribes to its team's questions
	agent := p.Agent("s-trace", "pod-1", client.WithTracerProvider(agentTP.TracerProvider()))

	ctx, root := agentTP.Tracer().Start(context.Background(), "agent.turn")
	allowed, err := agent.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -l"}})
	if err != nil || allowed.Outcome != messages.OutcomeAllow {
		t.Fatalf("ls -l: %+v, %v", allowed, err)
	}
	approved, err := agent.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	if err != nil || approved.ReasonCode != messages.ReasonApproved {
		t.Fatalf("make deploy: %+v, %v", approved, err)
	}
	if err := <-ch.ok; err != nil {
		t.Fatalf("the bot's response: %v", err)
	}
	root.End()
	// Flush every process's spans.
	for _, tp := range []*tracing.Provider{agentTP, brokerTP, botTP} {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatalf("flush spans: %v", err)
		}
	}
	spans := col.Wait(t, 30*time.Second, func(s []tracetest.Span) bool {
		return len(find(s, broker.SpanRespond, "")) == 1 && len(find(s, "agent.turn", "")) == 1 &&
			len(find(s, approverbot.SpanResponse, "")) == 1
	})
	turn := one(t, spans, "agent.turn", "")
	for _, s := range spans {
		if s.TraceID != turn.TraceID {
			t.Errorf("span %s/%s is in trace %s, not the agent's %s", s.Service, s.Name, s.TraceID, turn.TraceID)
		}
	}

	// The allowed call: agent → client span → broker request → policy,
	// store lookup, reply.
	req1 := checkRequest(t, spans, turn, allowed.RequestID, "allow")
	if req1.Attributes[string(broker.AttrReasonCode)] != "policy_allow" {
		t.Errorf("request span attributes %v, want reason_code policy_allow", req1.Attributes)
	}
	if pol := child(t, spans, req1, engine.SpanPolicy); pol.Attributes[string(engine.AttrAction)] != "allow" {
		t.Errorf("policy span attributes %v, want action allow", pol.Attributes)
	}
	child(t, spans, req1, engine.SpanStore+"lookup")
	child(t, spans, req1, broker.SpanReply)

	// The asked call: pending, stored and asked; the bot's response is a
	// child of the request's span; the broker's response span a child of
	// the bot's, linked to the request, with the store and effects under
	// it.
	req2 := checkRequest(t, spans, turn, approved.RequestID, "pending")
	if pol := child(t, spans, req2, engine.SpanPolicy); pol.Attributes[string(engine.AttrAction)] != "ask" {
		t.Errorf("policy span attributes %v, want action ask", pol.Attributes)
	}
	for _, name := range []string{engine.SpanStore + "lookup", engine.SpanStore + "prepare", engine.SpanStore + "open", engine.SpanEffects} {
		child(t, spans, req2, name)
	}
	botSpan := child(t, spans, req2, approverbot.SpanResponse)
	if botSpan.Service != "signoff-approver-bot" || botSpan.Attributes["signoff.approver"] != "alice" {
		t.Errorf("bot span %+v", botSpan)
	}
	resp := child(t, spans, botSpan, broker.SpanRespond)
	want := map[string]string{"signoff.request_id": approved.RequestID, "signoff.session_id": "s-trace", "signoff.approver": "alice",
		"signoff.applied": "true", "signoff.outcome": "allow", "signoff.reason_code": "approved"}
	for k, v := range want {
		if resp.Attributes[k] != v {
			t.Errorf("respond span: %s = %q, want %q (all: %v)", k, resp.Attributes[k], v, resp.Attributes)
		}
	}
	if len(resp.Links) != 1 || resp.Links[0].SpanID != req2.SpanID {
		t.Errorf("respond span links %v, want one to the request's span %s", resp.Links, req2.SpanID)
	}
	child(t, spans, resp, engine.SpanStore+"get")
	child(t, spans, resp, engine.SpanStore+"decide")
	if eff := child(t, spans, resp, engine.SpanEffects); eff.Attributes[string(engine.AttrState)] != "approved" {
		t.Errorf("effects span attributes %v, want state approved", eff.Attributes)
	}
}

// checkRequest finds the broker's span of requestID, checks it is the
// child of the agent's client span (itself a child of turn) and carries
// the request's attributes, and returns it.
func checkRequest(t *testing.T, spans []tracetest.Span, turn tracetest.Span, requestID, result string) tracetest.Span {
	t.Helper()
	req := one(t, spans, broker.SpanRequest, requestID)
	cli := one(t, spans, client.SpanRequest, requestID)
	if cli.ParentSpanID != turn.SpanID || cli.Service != "test-agent" {
		t.Errorf("client span %+v: want a child of the agent's turn %s", cli, turn.SpanID)
	}
	if req.ParentSpanID != cli.SpanID || req.Service != "signoff-broker" || req.Kind != 2 {
		t.Errorf("request span %+v: want a server span, child of the client span %s", req, cli.SpanID)
	}
	want := map[string]string{"signoff.session_id": "s-trace", "signoff.agent_id": "pod-1", "signoff.tool": "bash", "signoff.result": result}
	for k, v := range want {
		if req.Attributes[k] != v {
			t.Errorf("request span of %s: %s = %q, want %q (all: %v)", requestID, k, req.Attributes[k], v, req.Attributes)
		}
	}
	return req
}

// find lists the spans named name (with signoff.request_id requestID, if
// given).
func find(spans []tracetest.Span, name, requestID string) []tracetest.Span {
	var out []tracetest.Span
	for _, s := range spans {
		if s.Name == name && (requestID == "" || s.Attributes["signoff.request_id"] == requestID) {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans []tracetest.Span, name, requestID string) tracetest.Span {
	t.Helper()
	got := find(spans, name, requestID)
	if len(got) != 1 {
		t.Fatalf("%d spans %s of request %q, want 1", len(got), name, requestID)
	}
	return got[0]
}

// child returns the one span named name whose parent is parent.
func child(t *testing.T, spans []tracetest.Span, parent tracetest.Span, name string) tracetest.Span {
	t.Helper()
	var got []tracetest.Span
	for _, s := range spans {
		if s.Name == name && s.ParentSpanID == parent.SpanID {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d spans %s under %s (%s), want 1", len(got), name, parent.Name, parent.SpanID)
	}
	return got[0]
}
