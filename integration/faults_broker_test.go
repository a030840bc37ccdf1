package integration

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/integration/internal/plane"
	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// testBrokerKilled kills broker-1 with SIGKILL while agents keep asking and
// questions wait for approvers. So that it surely dies in the middle of
// requests, it is frozen (docker pause) for a second first: the requests
// NATS hands it meanwhile are taken and never answered. The SDK retries
// them with the same request id and another replica answers. The
// approvers take longer than the freeze to answer, so questions that the
// killed replica stored (its log names them) are answered only after its
// death, through the others, and their decisions reach the agents.
// Nothing is lost or doubled. The killed replica is then started again and
// serves.
func testBrokerKilled(t *testing.T, h *harness) {
	ctx := context.Background()
	victim := h.p.Brokers[0]
	var retries atomic.Int64
	tr := h.startTraffic(t, h.name("kill"), trafficConfig{
		Agents: 12, Gap: 10 * time.Millisecond, Think: 3 * time.Second, Mix: workload.Split(6),
		Options: []client.Option{client.WithLogf(func(format string, _ ...any) {
			if strings.Contains(format, "retrying") {
				retries.Add(1)
			}
		})},
	})
	t.Cleanup(func() { restartIfDown(t, victim) })

	// Traffic for a while, until the victim holds a question not yet
	// answered.
	time.Sleep(1500 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); ; {
		stored, err := questionsStoredBy(ctx, victim)
		if err != nil {
			t.Fatal(err)
		}
		if count(tr.Ledger.Entries(), func(e *workload.Entry, _ *messages.Decision) bool { return stored[e.ID] && e.Done.IsZero() }) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stored no question in 30 s of traffic", victim.Name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := victim.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	freezeAt := time.Now() // frozen when the call returns
	time.Sleep(time.Second)
	killAt := time.Now()
	if err := victim.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s frozen, then killed", victim.Name)
	time.Sleep(3 * time.Second)
	tr.Stop(t)
	tr.CheckAllowingStoreStalls(t, t.Name())

	entries := tr.Ledger.Entries()
	before := decidedBy(entries, victim.Name, func(e *workload.Entry, _ *messages.Decision) bool { return e.Done.Before(freezeAt) })
	after := decidedBy(entries, victim.Name, func(e *workload.Entry, _ *messages.Decision) bool { return e.Sent.After(freezeAt) })
	stored, err := questionsStoredBy(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	for id := range stored {
		if !tr.Ledger.Knows(id) {
			delete(stored, id) // an earlier scenario's
		}
	}
	pendingAtKill := count(entries, func(e *workload.Entry, d *messages.Decision) bool {
		return stored[e.ID] && e.Done.After(freezeAt) && d != nil && d.DecidedBy.Kind == messages.DeciderApprover
	})
	servedAfter := count(entries, func(e *workload.Entry, d *messages.Decision) bool { return e.Sent.After(killAt) && d != nil })
	t.Logf("%s decided %d requests before it froze and stored %d questions, %d of them answered after it froze; %d requests sent after the kill were decided by the others; the SDK retried %d times",
		victim.Name, before, len(stored), pendingAtKill, servedAfter, retries.Load())
	if after != 0 {
		t.Errorf("%s decided %d requests sent after it froze", victim.Name, after)
	}
	if retries.Load() == 0 {
		t.Error("no request was retried: the broker died holding none")
	}
	if pendingAtKill == 0 {
		t.Error("no question stored by the killed broker was answered after it froze: the scenario did not test pending requests")
	}
	if servedAfter == 0 {
		t.Error("no request sent after the kill was decided")
	}

	if err := victim.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// testBrokerCutOff disconnects broker-2 from the Redis network while it
// stays on the NATS network. It keeps answering (it still takes its share
// of the queue group) and fails closed: its decisions are denies with
// reason unavailable and its /readyz says 503, while the other replicas
// decide normally. Connected again, it serves again.
func testBrokerCutOff(t *testing.T, h *harness) {
	ctx := context.Background()
	victim := h.p.Brokers[1]
	tr := h.startTraffic(t, h.name("cut"), trafficConfig{Agents: 8, Gap: 10 * time.Millisecond, Think: 200 * time.Millisecond, Mix: workload.Split(4)})
	reconnected := false
	t.Cleanup(func() {
		if !reconnected {
			_ = victim.Connect(context.Background(), h.p.RedisNet)
		}
	})

	time.Sleep(time.Second)
	cutting := time.Now()
	if err := victim.Disconnect(ctx, h.p.RedisNet); err != nil {
		t.Fatal(err)
	}
	cutAt := time.Now() // Docker has removed the endpoint when the call returns
	t.Logf("%s disconnected from redis-net", victim.Name)
	time.Sleep(time.Second)
	code, body, err := victim.Readyz(ctx)
	if err != nil || code != 503 {
		t.Errorf("%s /readyz while cut off from Redis: %d %q %v, want 503", victim.Name, code, body, err)
	}
	for _, b := range h.p.Brokers {
		if b == victim {
			continue
		}
		if code, body, err := b.Readyz(ctx); err != nil || code != 200 {
			t.Errorf("%s /readyz while %s is cut off: %d %q %v, want 200", b.Name, victim.Name, code, body, err)
		}
	}
	time.Sleep(2 * time.Second)
	healAt := time.Now()
	if err := victim.Connect(ctx, h.p.RedisNet); err != nil {
		t.Fatal(err)
	}
	reconnected = true
	t.Logf("%s connected to redis-net again", victim.Name)
	time.Sleep(2 * time.Second)
	tr.Stop(t)

	during := func(e *workload.Entry) bool { return e.Done.After(cutting) && e.Sent.Before(healAt.Add(3*time.Second)) }
	tr.Check(t, workload.Tolerance{
		FailClosed: func(e *workload.Entry, d *messages.Decision) bool {
			return d.DecidedBy.ID == victim.Name && during(e)
		},
		// Cut between reading the request's state and the breakers, the
		// victim asks rather than allow (breakers it cannot read).
		Asked: during,
	})
	entries := tr.Ledger.Entries()
	inside := func(e *workload.Entry) bool { return e.Sent.After(cutAt) && e.Done.Before(healAt) }
	failClosed := decidedBy(entries, victim.Name, func(e *workload.Entry, d *messages.Decision) bool {
		return inside(e) && d.ReasonCode == workload.ReasonUnavailable
	})
	var allowedByVictim []string
	decidedBy(entries, victim.Name, func(e *workload.Entry, d *messages.Decision) bool {
		if inside(e) && d.Outcome == messages.OutcomeAllow {
			allowedByVictim = append(allowedByVictim, fmt.Sprintf("%s (%s, sent %s after the cut, decided at %s)",
				e.ID, d.ReasonCode, e.Sent.Sub(cutAt).Round(time.Millisecond), d.DecidedAt.Format("15:04:05.000")))
		}
		return false
	})
	allowedByOthers := count(entries, func(e *workload.Entry, d *messages.Decision) bool {
		return inside(e) && d != nil && d.Outcome == messages.OutcomeAllow && d.DecidedBy.ID != victim.Name
	})
	t.Logf("while cut off: %s failed closed on %d requests and allowed %d; the other replicas allowed %d", victim.Name, failClosed, len(allowedByVictim), allowedByOthers)
	if failClosed == 0 {
		t.Errorf("%s answered no request while cut off from Redis: it should keep answering over NATS, failing closed", victim.Name)
	}
	if len(allowedByVictim) != 0 {
		t.Errorf("%s allowed %d requests while it could not read Redis (cut at %s): %s", victim.Name, len(allowedByVictim),
			cutAt.Format("15:04:05.000"), strings.Join(allowedByVictim, "; "))
	}
	if allowedByOthers == 0 {
		t.Error("the other replicas allowed nothing while one was cut off")
	}

	// Back on redis-net it serves again: within a few seconds (its
	// connections to Redis are dialled anew) a policy allow is decided by
	// it. Until then it may still fail closed; nothing else is allowed.
	h.requireReady(t, "after reconnecting "+victim.Name)
	probe, err := client.New(h.p.Connect(t, "cut-probe"), client.WithSession(h.name("cut-probe")), client.WithAgent("probe"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	var failedClosedAfter int
	for i := 0; ; i++ {
		d, err := probe.Request(ctx, workload.CallFor(workload.KindAllow, "probe"))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case d.Outcome == messages.OutcomeAllow && d.ReasonCode == messages.ReasonPolicyAllow:
		case d.DecidedBy.ID == victim.Name && d.ReasonCode == workload.ReasonUnavailable:
			failedClosedAfter++
		default:
			t.Fatalf("probe %d after the heal: %s/%s by %s (%s)", i, d.Outcome, d.ReasonCode, d.DecidedBy.ID, d.Reason)
		}
		if d.DecidedBy.ID == victim.Name && d.Outcome == messages.OutcomeAllow {
			t.Logf("%s allowed again %s after the heal (probe %d; %d fail-closed denies from it in between)",
				victim.Name, time.Since(healAt).Round(100*time.Millisecond), i, failedClosedAfter)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s allowed none of %d requests within 15 s of its return to redis-net (%d fail-closed denies)", victim.Name, i+1, failedClosedAfter)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// questionsStoredBy returns the request ids of the questions broker n
// stored (its "approval needed" log lines).
func questionsStoredBy(ctx context.Context, n *plane.Node) (map[string]bool, error) {
	lines, err := n.LogLines(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, l := range lines {
		if m := approvalNeededLine.FindStringSubmatch(l); m != nil {
			ids[m[1]] = true
		}
	}
	return ids, nil
}

// approvalNeededLine matches the broker's log line for a stored question
// (log/slog text format).
var approvalNeededLine = regexp.MustCompile(`msg="approval needed" .*\brequest_id=(\S+)`)

// restartIfDown starts n again when a failed scenario left it stopped, so
// the next scenario finds the whole plane.
func restartIfDown(t *testing.T, n *plane.Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if up, err := n.Running(ctx); err == nil && !up {
		if err := n.Start(ctx); err != nil {
			t.Errorf("restart after the scenario: %v", err)
		}
	}
}
