package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/integration/internal/plane"
	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Issue 30: a hard stop holds through a write stall with votes in flight.

// hardStopRuns is how many times testHardStopThroughAWriteStall runs its
// fault plan: SIGNOFF_IT_HARDSTOP_RUNS, default 2 (a run takes about 20 s).
// The issue asks for 20 clean runs: SIGNOFF_IT_HARDSTOP_RUNS=20.
func hardStopRuns(t *testing.T) int {
	v := os.Getenv("SIGNOFF_IT_HARDSTOP_RUNS")
	if v == "" {
		return 2
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("SIGNOFF_IT_HARDSTOP_RUNS=%q: want a positive number", v)
	}
	return n
}

// testHardStopThroughAWriteStall runs issue 30's fault plan: Redis writes
// paused (CLIENT PAUSE WRITE, 3 s); during the pause a storm of reject_hard
// answers over 15 ms, on the two brokers that serve (the third is down);
// both frozen (SIGSTOP) with their votes in flight, killed once writes
// resumed (so Redis ran their votes and nobody carried them out), and
// restarted 2 s later; the third broker comes back as writes resume.
// Half of the agents begin a new turn in the stall (their user spoke;
// they have not heard of any rejection). Each agent, as soon as it learns
// of its rejection, probes its session with a call the policy allows.
//
// Checks, every run: each rejection reaches its agent as reject_hard and
// every probe after it is denied hard_stop — 0 allows after a hard reject;
// no turn begun in the stall clears the stop before its agent has the
// reject, nor after it (probeAfterReject: the client's turns name what it
// heard); each sibling is rejected hard_stop; one audit record for each.
func testHardStopThroughAWriteStall(t *testing.T, h *harness) {
	runs := hardStopRuns(t)
	for run := range runs {
		if !t.Run(fmt.Sprintf("run %d of %d", run+1, runs), func(t *testing.T) { hardStopRun(t, h) }) {
			return
		}
		h.requireReady(t, "between runs")
	}
}

func hardStopRun(t *testing.T, h *harness) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	deciders, third := h.p.Brokers[:2], h.p.Brokers[2]
	t.Cleanup(func() {
		for _, b := range h.p.Brokers {
			_ = b.Unpause(context.Background())
			restartIfDown(t, b)
		}
	})
	name := h.name("stall")
	agents := h.p.Connect(t, name+"-agents")
	device := h.p.ConnectVia(t, 2, name+"-device")
	questions := newQuestionTap(t, device)
	resolved := newResolvedTap(t, device)
	const n = 12
	sessions := make([]*stoppedSession, n)
	for i := range sessions {
		sessions[i] = openStoppedSession(ctx, t, agents, questions, fmt.Sprintf("%s-%d", name, i))
	}
	askAll(ctx, t, questions, sessions)

	// Only the two deciders serve the storm.
	if err := third.Stop(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	rdb := redisClient(ctx, t, h)
	const pause = 3 * time.Second
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", pause.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	pausedAt := time.Now()
	for _, s := range sessions {
		r := response(s.tq, messages.Response{Approver: messages.Approver{ID: "alice"}, RejectMode: messages.RejectHard, Feedback: "stop"})
		go func() { _, _ = workload.Respond(ctx, device, messages.DefaultPrefix, r, 10*time.Second) }()
		time.Sleep(15 * time.Millisecond / n)
	}
	// The votes wait in Redis; the brokers' store calls are bounded by
	// 500 ms: freeze both before theirs give up.
	time.Sleep(250 * time.Millisecond)
	if err := parallelNodes(ctx, deciders, (*plane.Node).Pause); err != nil {
		t.Fatal(err)
	}
	// Users speak in the stall: half of the agents begin a new turn. No
	// broker answers until the third is back.
	turns := make([]chan turnResult, n)
	for i, s := range sessions {
		if i%2 == 0 {
			turns[i] = make(chan turnResult, 1)
			go func() {
				cleared, err := s.c.NewTurn(ctx)
				turns[i] <- turnResult{cleared, err, time.Now()}
			}()
		}
	}
	time.Sleep(time.Until(pausedAt.Add(pause + 500*time.Millisecond))) // writes resumed: the votes ran
	if err := parallelNodes(ctx, deciders, (*plane.Node).Kill); err != nil {
		t.Fatal(err)
	}
	if err := third.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Log("the deciders were frozen with their votes in flight and killed after writes resumed; the third broker is back")
	// Each agent probes its session as soon as it learns of its rejection.
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() { probeAfterReject(ctx, t, s, turns[i]) })
	}
	time.Sleep(2 * time.Second)
	if err := parallelNodes(ctx, deciders, (*plane.Node).Start); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range sessions {
		for !resolved.has(s.target.RequestID) || !resolved.has(s.sibling.RequestID) {
			if time.Now().After(deadline) {
				t.Fatalf("devices did not get resolved for %s and %s", s.target.RequestID, s.sibling.RequestID)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	checkAudit(ctx, t, h, sessions...)
}

// askAll waits until every session's two questions are asked. On a
// loaded machine a broker may fail closed on an ask (deny unavailable: its
// store call timed out) before the fault plan starts; that agent asks
// again with the same request id, as an agent does, until its question is
// asked.
func askAll(ctx context.Context, t *testing.T, questions *questionTap, sessions []*stoppedSession) {
	t.Helper()
	got := map[string]messages.ApprovalNeeded{}
	deadline := time.After(45 * time.Second)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for len(got) < 2*len(sessions) {
		select {
		case m := <-questions.ch:
			var an messages.ApprovalNeeded
			if json.Unmarshal(m.Data, &an) == nil {
				got[an.Request.RequestID] = an
			}
		case <-tick.C:
			for _, s := range sessions {
				s.reask(ctx, t, got)
			}
		case <-deadline:
			t.Fatalf("%d of %d questions asked within 45 s", len(got), 2*len(sessions))
		}
	}
	for _, s := range sessions {
		s.tq, s.sq = got[s.target.RequestID], got[s.sibling.RequestID]
	}
}

// reask sends s's target or sibling again when its agent got a decision
// (a fail-closed deny) before its question was asked.
func (s *stoppedSession) reask(ctx context.Context, t *testing.T, asked map[string]messages.ApprovalNeeded) {
	for _, x := range []struct {
		ch   *<-chan outcome
		call client.Call
	}{{&s.targetD, s.target}, {&s.siblingD, s.sibling}} {
		if _, ok := asked[x.call.RequestID]; ok {
			continue
		}
		select {
		case o := <-*x.ch:
			if o.err == nil && o.d.ReasonCode != workload.ReasonUnavailable {
				t.Fatalf("%s decided %s/%s before its question was asked", x.call.RequestID, o.d.Outcome, o.d.ReasonCode)
			}
			t.Logf("%s: asked again after %v", x.call.RequestID, describeOutcome(o))
			if o.err == nil {
				if s.reasked == nil {
					s.reasked = map[string]int{}
				}
				s.reasked[x.call.RequestID]++
			}
			*x.ch = requestAsync(ctx, s.c, x.call)
		default:
		}
	}
}

func describeOutcome(o outcome) string {
	if o.err != nil {
		return o.err.Error()
	}
	return fmt.Sprintf("%s/%s (%q)", o.d.Outcome, o.d.ReasonCode, o.d.Reason)
}

type turnResult struct {
	cleared bool
	err     error
	at      time.Time // when the reply came
}

// probeAfterReject waits for s's rejection and then, at once, probes the
// session with three calls the policy allows: each must be denied
// hard_stop — 0 allows after a hard reject.
//
// turn, if not nil, delivers the new turn the agent began in the stall,
// before it heard of the reject. That turn must not end the stop (the
// issue's failure: the turn cleared the stop, then the outbox told the
// agent) — nor when it reaches a broker only after the rejection was
// carried out and acknowledged (stuck in the client's retries while no
// broker answered): pkg/client's turn names every hard rejection the
// agent had heard of, none here, so it ends no stop (STATE, "Hard stops
// and turns"). Every probe is denied.
func probeAfterReject(ctx context.Context, t *testing.T, s *stoppedSession, turn chan turnResult) {
	var td *messages.Decision
	select {
	case o := <-s.targetD:
		if o.err != nil {
			t.Errorf("%s: %v", s.target.RequestID, o.err)
			return
		}
		td = o.d
	case <-time.After(45 * time.Second):
		t.Errorf("%s: no decision within 45 s (the agent does not poll)", s.target.RequestID)
		return
	}
	learned := time.Now()
	if td.Outcome != messages.OutcomeDeny || td.ReasonCode != messages.ReasonRejected || td.RejectMode != messages.RejectHard {
		t.Errorf("%s: %s/%s %s, want deny/rejected reject_hard", s.target.RequestID, td.Outcome, td.ReasonCode, td.RejectMode)
		return
	}
	var tr *turnResult
	takeTurn := func(wait time.Duration) {
		if turn == nil || tr != nil {
			return
		}
		select {
		case r := <-turn:
			tr = &r
			if r.err != nil {
				t.Errorf("%s: new turn: %v", s.c.SessionID(), r.err)
			}
			if r.cleared {
				t.Errorf("%s: the new turn begun in the stall, before the agent heard of its reject_hard, cleared the stop (its reply came %s after the agent heard)", s.c.SessionID(), r.at.Sub(learned).Round(time.Millisecond))
			}
		case <-time.After(wait):
		}
	}
	takeTurn(0)
	for i := range 3 {
		d, err := s.c.Request(ctx, workload.CallFor(workload.KindAllow, fmt.Sprintf("%s-probe%d", s.c.SessionID(), i)))
		if err != nil {
			t.Errorf("%s: probe %d: %v", s.c.SessionID(), i, err)
			return
		}
		takeTurn(0)
		allowed := d.Outcome != messages.OutcomeDeny
		if allowed && tr == nil {
			// The stall turn may have cleared the stop with its reply
			// still on the way: wait for it before judging.
			takeTurn(30 * time.Second)
		}
		switch {
		case d.Outcome == messages.OutcomeDeny && d.ReasonCode == messages.ReasonHardStop:
		case d.Outcome == messages.OutcomeDeny && d.ReasonCode == workload.ReasonUnavailable:
			// Failed closed (its store call timed out on a loaded
			// machine): not an allow, but not the stop either.
			t.Logf("%s: probe %d: deny/unavailable", s.c.SessionID(), i)
		default:
			t.Errorf("%s: probe %d, %s after the agent learned of its reject_hard: %s/%s, want deny/hard_stop (0 allows after a hard reject)",
				s.c.SessionID(), i, time.Since(learned).Round(time.Millisecond), d.Outcome, d.ReasonCode)
		}
	}
	takeTurn(30 * time.Second)
	if turn != nil && tr == nil {
		t.Errorf("%s: the new turn got no answer within 30 s", s.c.SessionID())
	}
	select {
	case o := <-s.siblingD:
		if o.err != nil || o.d.Outcome != messages.OutcomeDeny || o.d.ReasonCode != messages.ReasonHardStop {
			t.Errorf("%s: %+v %v, want deny/hard_stop", s.sibling.RequestID, o.d, o.err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("%s: no decision within 30 s", s.sibling.RequestID)
	}
}

// parallelNodes runs op on every node at once.
func parallelNodes(ctx context.Context, nodes []*plane.Node, op func(*plane.Node, context.Context) error) error {
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() { errs <- op(n, ctx) }()
	}
	var first error
	for range nodes {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
