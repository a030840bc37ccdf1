package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	sdktracetest "go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

const examplePolicy = `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(rm -rf *)", action: deny }
teams:
  default: { members: [alice] }
`

// devPlane starts what `broker --dev` runs: an embedded NATS server with
// JetStream, the memory store and one broker. It returns a connection for
// the example and a function that stops everything.
func devPlane() (*nats.Conn, func()) {
	dir, err := os.MkdirTemp("", "signoff-example-*")
	if err != nil {
		panic(err)
	}
	srv, err := server.NewServer(&server.Options{Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		panic("nats-server did not start")
	}
	pol, err := policy.Parse([]byte(examplePolicy), "example.yaml")
	if err != nil {
		panic(err)
	}
	bnc, _ := nats.Connect(srv.ClientURL())
	b, err := broker.New(broker.Config{Conn: bnc, Store: memstore.New(memstore.Options{}), Policy: broker.StaticPolicy{P: pol},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ReapInterval: 50 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = b.Run(ctx); close(done) }()
	for b.Ready(context.Background()) != nil {
		time.Sleep(5 * time.Millisecond)
	}
	nc, _ := nats.Connect(srv.ClientURL())
	return nc, func() {
		nc.Close()
		cancel()
		<-done
		bnc.Close()
		srv.Shutdown()
		_ = os.RemoveAll(dir)
	}
}

// approveNext plays the approver: it answers the next question with approved.
func approveNext(nc *nats.Conn, approved bool, mode messages.RejectMode) {
	sub, _ := nc.SubscribeSync("signoff.v1.ask.default")
	_ = nc.Flush()
	go func() {
		defer func() { _ = sub.Unsubscribe() }()
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			return
		}
		var q messages.ApprovalNeeded
		_ = json.Unmarshal(msg.Data, &q)
		resp, _ := json.Marshal(messages.Response{V: 1, RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "alice"}, Approved: approved, RejectMode: mode, Feedback: "not today", Digest: q.Digest})
		_, _ = nc.Request("signoff.v1.respond", resp, 5*time.Second)
	}()
}

// rejectHardNext plays an approver who rejects the next question with
// reject_hard; the channel closes once the broker answered the response
// (the rejection carried out).
func rejectHardNext(nc *nats.Conn) <-chan struct{} {
	done := make(chan struct{})
	sub, _ := nc.SubscribeSync("signoff.v1.ask.default")
	_ = nc.Flush()
	go func() {
		defer close(done)
		defer func() { _ = sub.Unsubscribe() }()
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			return
		}
		var q messages.ApprovalNeeded
		_ = json.Unmarshal(msg.Data, &q)
		resp, _ := json.Marshal(messages.Response{V: 1, RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "alice"}, RejectMode: messages.RejectHard, Feedback: "not today"})
		_, _ = nc.Request("signoff.v1.respond", resp, 5*time.Second)
	}()
	return done
}

// approveNextWithChanges plays an approver who approves the next question
// with changed arguments.
func approveNextWithChanges(nc *nats.Conn, args string) {
	sub, _ := nc.SubscribeSync("signoff.v1.ask.default")
	_ = nc.Flush()
	go func() {
		defer func() { _ = sub.Unsubscribe() }()
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			return
		}
		var q messages.ApprovalNeeded
		_ = json.Unmarshal(msg.Data, &q)
		resp, _ := json.Marshal(messages.Response{V: 1, RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "alice"}, Approved: true, UpdatedArguments: json.RawMessage(args), Digest: q.Digest})
		_, _ = nc.Request("signoff.v1.respond", resp, 5*time.Second)
	}()
}

// An approver may approve a call with changes: the agent runs the call
// CallToRun returns, with the approver's arguments, never its own.
func ExampleCallToRun() {
	nc, stop := devPlane()
	defer stop()
	c, _ := client.New(nc, client.WithSession("session-6"), client.WithAgent("pod-7"))
	ctx := context.Background()

	approveNextWithChanges(nc, `{"command": "make deploy ENV=staging"}`)
	call := client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy ENV=prod"}}
	d, _ := c.Request(ctx, call)
	fmt.Println(d.Outcome, d.Reason)
	if run, ok := client.CallToRun(call, d); ok {
		fmt.Printf("running %s %s\n", run.Tool, run.Arguments)
	}
	// Output:
	// allow approved with changes (once) by alice
	// running bash {"command":"make deploy ENV=staging"}
}

func ExampleNew() {
	nc, stop := devPlane()
	defer stop()

	c, err := client.New(nc, client.WithSession("session-1"), client.WithAgent("pod-7"), client.WithRequestedBy("bob"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.SessionID())
	// Output: session-1
}

func ExampleClient_Request() {
	nc, stop := devPlane()
	defer stop()
	c, _ := client.New(nc, client.WithSession("session-1"), client.WithAgent("pod-7"))
	ctx := context.Background()

	d, _ := c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -la"}})
	fmt.Println(d.Outcome, d.ReasonCode)

	d, _ = c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls && rm -rf /"}})
	fmt.Println(d.Outcome, d.ReasonCode)

	// An ask waits for a human: here a goroutine approves.
	approveNext(nc, true, "")
	d, _ = c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	fmt.Println(d.Outcome, d.ReasonCode, d.DecidedBy.ID)
	// Output:
	// allow policy_allow
	// deny policy_deny
	// allow approved alice
}

func ExampleClient_RunBatch() {
	nc, stop := devPlane()
	defer stop()
	c, _ := client.New(nc, client.WithSession("session-2"), client.WithAgent("pod-7"))
	ctx := context.Background()

	calls := []client.Call{
		{Tool: "bash", Arguments: map[string]any{"command": "ls -l"}},
		{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}},
		{Tool: "bash", Arguments: map[string]any{"command": "ls -la"}},
	}
	approveNext(nc, false, messages.RejectHard) // the approver stops the turn
	results, err := c.RunBatch(ctx, calls, func(_ context.Context, call client.Call) error { return nil })
	for _, r := range results {
		fmt.Printf("ran=%v", r.Ran)
		if r.LLMMessage != "" {
			fmt.Print(" ", r.LLMMessage)
		}
		fmt.Println()
	}
	fmt.Println(err == client.ErrHardStop)
	// Output:
	// ran=true
	// ran=false User rejected tool 'bash'. Feedback: not today
	//
	// The user stopped this turn: do not call more tools; wait for the user's next message.
	// ran=false Tool 'bash' was not run because the user stopped this turn: do not call more tools; wait for the user's next message.
	// true
}

func ExampleClient_NewTurn() {
	nc, stop := devPlane()
	defer stop()
	c, _ := client.New(nc, client.WithSession("session-3"), client.WithAgent("pod-7"))
	ctx := context.Background()

	approveNext(nc, false, messages.RejectHard)
	d, _ := c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	fmt.Println(d.ReasonCode, d.RejectMode)
	d, _ = c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -l"}})
	fmt.Println(d.ReasonCode)

	cleared, _ := c.NewTurn(ctx) // the user spoke again
	fmt.Println(cleared)
	d, _ = c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -l"}})
	fmt.Println(d.ReasonCode)
	// Output:
	// rejected reject_hard
	// hard_stop
	// true
	// policy_allow
}

// A gate that runs one process per tool call and per prompt, and keeps
// nothing between them, cannot know what the agent heard: its turns end a
// stop as they did before turns were tracked. A long-lived client's turn,
// sent before the agent heard of the reject_hard, would not.
func ExampleWithStatelessTurns() {
	nc, stop := devPlane()
	defer stop()
	ctx := context.Background()
	hook := func() *client.Client {
		c, _ := client.New(nc, client.WithSession("session-9"), client.WithAgent("pod-7"), client.WithStatelessTurns())
		return c
	}

	answered := rejectHardNext(nc)
	d, _ := hook().Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	fmt.Println(d.ReasonCode, d.RejectMode)
	<-answered // the rejection is carried out: the user reads it, then speaks

	cleared, _ := hook().NewTurn(ctx) // a new process, on the user's next prompt
	fmt.Println(cleared)
	d, _ = hook().Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -l"}})
	fmt.Println(d.ReasonCode)
	// Output:
	// rejected reject_hard
	// true
	// policy_allow
}

// A gate that runs one process per call keeps what its agent heard
// between processes (a hook's state file): Seen after each call, WithSeen
// in the next process. Its turns are then tracked like a long-lived
// client's.
func ExampleWithSeen() {
	nc, stop := devPlane()
	defer stop()
	ctx := context.Background()
	var kept []string // the state file
	process := func() *client.Client {
		c, _ := client.New(nc, client.WithSession("session-10"), client.WithAgent("pod-7"), client.WithSeen(kept...))
		return c
	}

	answered := rejectHardNext(nc)
	c := process()
	d, _ := c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	<-answered
	kept = c.Seen()
	fmt.Println(d.ReasonCode, d.RejectMode, len(kept))

	c = process() // the user's next prompt
	cleared, _ := c.NewTurn(ctx)
	kept = c.Seen()
	fmt.Println(cleared, len(kept))
	// Output:
	// rejected reject_hard 1
	// true 0
}

func ExampleClient_Cancel() {
	nc, stop := devPlane()
	defer stop()
	c, _ := client.New(nc, client.WithSession("session-4"), client.WithAgent("pod-7"))
	ctx := context.Background()

	done := make(chan *messages.Decision)
	go func() {
		d, _ := c.Request(ctx, client.Call{RequestID: "req-1", Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
		done <- d
	}()
	// Wait until the request is pending, then the agent shuts down.
	for {
		if rc, err := c.Status(ctx, "req-1"); err == nil && rc.State == messages.StatePending {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ids, _ := c.Cancel(ctx)
	fmt.Println(ids)
	fmt.Println((<-done).ReasonCode)
	// Output:
	// [req-1]
	// cancelled
}

func ExampleClient_Status() {
	nc, stop := devPlane()
	defer stop()
	c, _ := client.New(nc, client.WithSession("session-5"), client.WithAgent("pod-7"))
	ctx := context.Background()

	approveNext(nc, true, "")
	_, _ = c.Request(ctx, client.Call{RequestID: "req-9", Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})

	// After a restart, the agent asks what became of the request it sent.
	rc, _ := c.Status(ctx, "req-9")
	fmt.Println(rc.State, rc.Decision.Outcome, rc.Decision.DecidedBy.ID)
	// Output: approved allow alice
}

// A hook or a gateway that must answer its host in time bounds how long it
// waits for a broker to take a request: with no broker on the NATS server,
// Request gives up after the receipt timeout instead of retrying until its
// context ends. The wait for a human's answer is not bounded by it.
func ExampleWithReceiptTimeout() {
	srv, err := server.NewServer(&server.Options{Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	srv.Start()
	defer srv.Shutdown()
	srv.ReadyForConnections(10 * time.Second)
	nc, _ := nats.Connect(srv.ClientURL())
	defer nc.Close()

	c, _ := client.New(nc, client.WithSession("session-1"), client.WithAgent("pod-7"),
		client.WithReceiptTimeout(300*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls"}})
	fmt.Println(errors.Is(err, context.DeadlineExceeded), time.Since(start) < 5*time.Second)
	// Output: true true
}

func ExampleWithGate() {
	srv, err := server.NewServer(&server.Options{Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	srv.Start()
	defer srv.Shutdown()
	srv.ReadyForConnections(10 * time.Second)
	nc, _ := nats.Connect(srv.ClientURL())
	defer nc.Close()
	// Stands in for a broker: shows the header and refuses the request.
	_, _ = nc.Subscribe("signoff.v1.req.*", func(m *nats.Msg) {
		fmt.Println(m.Header.Get(messages.GateHeader))
		_ = m.Respond([]byte(`{"v":1,"error":{"code":"forbidden","message":"example"}}`))
	})

	c, _ := client.New(nc, client.WithSession("session-1"), client.WithAgent("pod-7"),
		client.WithGate(messages.GateMCP, "v1.2.0"))
	_, err = c.Request(context.Background(), client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls"}})
	fmt.Println(err != nil)
	// Output:
	// mcp-gateway/v1.2.0
	// true
}

// ExampleWithTracerProvider sends a call inside the agent's own span: the
// client's span of the request is its child, and the brokers receive the
// trace in the request's traceparent header.
func ExampleWithTracerProvider() {
	nc, stop := devPlane()
	defer stop()
	rec := sdktracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	c, err := client.New(nc, client.WithSession("session-traced"), client.WithAgent("pod-7"), client.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	ctx, turn := tp.Tracer("agent").Start(context.Background(), "agent.turn")
	d, err := c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -la"}})
	turn.End()
	if err != nil {
		panic(err)
	}
	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.Parent().SpanID() == turn.SpanContext().SpanID())
	}
	fmt.Println(d.Outcome)
	// Output:
	// signoff.client.request true
	// agent.turn false
	// allow
}
