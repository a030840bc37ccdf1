package client_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// turnStub plays the broker's side of what NewTurn's seen list is made
// of: each request is answered with the next scripted decision, each turn
// with the next scripted reply, and the turns it received are kept.
type turnStub struct {
	decisions chan messages.Decision
	replies   chan messages.TurnReply
	turns     chan messages.TurnRequest
}

func startTurnStub(t *testing.T, nc *nats.Conn, sess string) *turnStub {
	t.Helper()
	s := &turnStub{decisions: make(chan messages.Decision, 8), replies: make(chan messages.TurnReply, 8), turns: make(chan messages.TurnRequest, 8)}
	subj := messages.Subjects{}
	reply := func(m *nats.Msg, v any) {
		data, _ := json.Marshal(v)
		if err := m.Respond(data); err != nil {
			t.Error(err)
		}
	}
	for subject, handle := range map[string]nats.MsgHandler{
		subj.Req(sess): func(m *nats.Msg) {
			var req messages.Request
			if err := json.Unmarshal(m.Data, &req); err != nil {
				t.Error(err)
				return
			}
			d := <-s.decisions
			d.V, d.RequestID, d.SessionID, d.Outcome = messages.Version, req.RequestID, sess, messages.OutcomeDeny
			reply(m, messages.Receipt{V: messages.Version, RequestID: req.RequestID, State: messages.StateRejected, Decision: &d})
		},
		subj.Turn(sess): func(m *nats.Msg) {
			var tr messages.TurnRequest
			if err := json.Unmarshal(m.Data, &tr); err != nil {
				t.Error(err)
				return
			}
			s.turns <- tr
			reply(m, <-s.replies)
		},
	} {
		sub, err := nc.Subscribe(subject, handle)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// turn runs c.NewTurn against the stub's next reply and returns what the
// broker received and what NewTurn returned.
func (s *turnStub) turn(t *testing.T, c *client.Client, rep messages.TurnReply) (messages.TurnRequest, bool) {
	t.Helper()
	rep.V = messages.Version
	s.replies <- rep
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	cleared, err := c.NewTurn(ctx)
	if err != nil {
		t.Fatalf("NewTurn: %v", err)
	}
	return <-s.turns, cleared
}

// TestNewTurnNamesEveryHardRejectionTheClientHeardOf: the client's turn
// says its seen list is complete and names the reject_hard decisions it
// received and the rejections its hard_stop denials named, nothing else;
// it keeps them while a stop holds (the reply names what it missed), and
// drops them once a turn found no stop holding.
func TestNewTurnNamesEveryHardRejectionTheClientHeardOf(t *testing.T) {
	srv := testenv.NATS(t, testenv.WithoutJetStream())
	stub := startTurnStub(t, srv.Connect(t), "s-turn")
	c, err := client.New(srv.Connect(t), client.WithSession("s-turn"), client.WithAgent("pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []messages.Decision{
		{ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectHard},
		{ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectSoft},
		{ReasonCode: messages.ReasonHardStop, RejectMode: messages.RejectHard, StopRejections: []string{"r-other", "hard-1"}},
		{ReasonCode: messages.ReasonPolicyDeny},
	} {
		stub.decisions <- d
	}
	for _, id := range []string{"hard-1", "soft-1", "stop-1", "deny-1"} {
		if _, err := c.Request(t.Context(), client.Call{RequestID: id, Tool: "bash", Arguments: map[string]any{"command": "ls"}}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"hard-1", "r-other"}
	tr, cleared := stub.turn(t, c, messages.TurnReply{Unheard: []string{"r-late"}})
	if !tr.SeenComplete || !slices.Equal(tr.Seen, want) || cleared {
		t.Fatalf("first turn sent %+v, cleared %v; want seen_complete with %v, not cleared", tr, cleared, want)
	}
	// The stop held: the next turn names them all again.
	tr, cleared = stub.turn(t, c, messages.TurnReply{StopCleared: true})
	if !tr.SeenComplete || !slices.Equal(tr.Seen, want) || !cleared {
		t.Fatalf("second turn sent %+v, cleared %v; want seen_complete with %v, cleared", tr, cleared, want)
	}
	tr, _ = stub.turn(t, c, messages.TurnReply{})
	if !tr.SeenComplete || len(tr.Seen) != 0 {
		t.Fatalf("turn after a cleared stop sent %+v; want seen_complete naming nothing", tr)
	}
}

// TestAStatelessClientsTurnDoesNotClaimItsListIsComplete: a client made
// WithStatelessTurns (a hook's) names what it heard but does not say the
// list is complete, so its turn ends a stop as an untracked one does.
func TestAStatelessClientsTurnDoesNotClaimItsListIsComplete(t *testing.T) {
	srv := testenv.NATS(t, testenv.WithoutJetStream())
	stub := startTurnStub(t, srv.Connect(t), "s-hook")
	c, err := client.New(srv.Connect(t), client.WithSession("s-hook"), client.WithAgent("pod-1"), client.WithStatelessTurns())
	if err != nil {
		t.Fatal(err)
	}
	stub.decisions <- messages.Decision{ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectHard}
	if _, err := c.Request(t.Context(), client.Call{RequestID: "hard-1", Tool: "bash", Arguments: map[string]any{"command": "ls"}}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := stub.turn(t, c, messages.TurnReply{StopCleared: true}); tr.SeenComplete || !slices.Equal(tr.Seen, []string{"hard-1"}) {
		t.Fatalf("turn sent %+v; want seen [hard-1] without seen_complete", tr)
	}
}
