package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// sessionID is agent a's session id (also its agent id).
func sessionID(prefix string, a int) string { return prefix + "-" + strconv.Itoa(a) }

// entry is what the fleet learned about one request.
type entry struct {
	kind     kind
	latency  time.Duration
	decision *messages.Decision
	err      error
	// published are the decision messages seen on the request's decision
	// subject: at most one for a request that went pending, none for one
	// decided in its receipt.
	published []messages.Decision
}

// ledger records every request of a run; safe for concurrent use.
type ledger struct {
	mu      sync.Mutex
	entries map[string]*entry
	order   []string
	stray   []string // decision messages for request ids this run never sent
}

func newLedger() *ledger { return &ledger{entries: map[string]*entry{}} }

func (l *ledger) add(id string, k kind) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[id] = &entry{kind: k}
	l.order = append(l.order, id)
}

func (l *ledger) done(id string, lat time.Duration, d *messages.Decision, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[id]
	e.latency, e.decision, e.err = lat, d, err
}

func (l *ledger) published(id string, d messages.Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id]
	if !ok {
		l.stray = append(l.stray, id)
		return
	}
	e.published = append(e.published, d)
}

// approverStats counts what the built-in approver did.
type approverStats struct {
	mu        sync.Mutex
	seen      map[string]bool
	questions int
	applied   int
	refused   int
	errors    []string
}

// runFleet runs the agents (and the approver) and returns the summary.
func runFleet(ctx context.Context, cfg *config, conns []*nats.Conn) (*Summary, error) {
	subj, err := messages.NewSubjects(cfg.prefix)
	if err != nil {
		return nil, err
	}
	led := newLedger()
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	if subs, err = watchDecisions(cfg, conns, subj, led); err != nil {
		return nil, err
	}
	var ap *approverStats
	var apWG sync.WaitGroup
	if cfg.approver != "" {
		ap = &approverStats{seen: map[string]bool{}}
		s, err := startApprover(ctx, cfg, conns[0], subj, ap, &apWG)
		if err != nil {
			return nil, err
		}
		subs = append(subs, s)
	}
	for _, nc := range conns {
		if err := nc.FlushWithContext(ctx); err != nil {
			return nil, fmt.Errorf("flush subscriptions: %w", err)
		}
	}
	start := time.Now()
	if err := runAgents(ctx, cfg, conns, led); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	apWG.Wait()

	// Late duplicates would arrive now: give them a moment.
	if cfg.settle > 0 {
		select {
		case <-time.After(cfg.settle):
		case <-ctx.Done():
		}
	}
	for _, nc := range conns {
		fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = nc.FlushWithContext(fctx)
		cancel()
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	sum := summarize(cfg, led, elapsed)
	if ap != nil {
		ap.mu.Lock()
		sum.Approver = &ApproverSummary{ID: cfg.approver, Questions: ap.questions, Applied: ap.applied,
			Refused: ap.refused, Errors: len(ap.errors)}
		sum.addErrors(ap.errors...)
		ap.mu.Unlock()
		sum.finish()
	}
	return sum, nil
}

// watchDecisions watches every session's decision subject, to see
// duplicates the SDK would hide (it returns the first decision and stops
// listening).
func watchDecisions(cfg *config, conns []*nats.Conn, subj messages.Subjects, led *ledger) ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for a := range cfg.agents {
		nc := conns[a%len(conns)]
		s, err := nc.Subscribe(subj.DecisionAll(sessionID(cfg.sessionPrefix, a)), func(m *nats.Msg) {
			_, id, err := subj.DecisionFromSubject(m.Subject)
			if err != nil {
				return
			}
			var d messages.Decision
			if err := json.Unmarshal(m.Data, &d); err != nil {
				led.published(id, messages.Decision{RequestID: id, Reason: "undecodable decision message: " + err.Error()})
				return
			}
			led.published(id, d)
		})
		if err != nil {
			return subs, fmt.Errorf("subscribe to decisions: %w", err)
		}
		subs = append(subs, s)
	}
	return subs, nil
}

// startApprover answers the fleet's questions as cfg.approver, 32 at a
// time; wg counts the answers in flight.
func startApprover(ctx context.Context, cfg *config, nc *nats.Conn, subj messages.Subjects, ap *approverStats, wg *sync.WaitGroup) (*nats.Subscription, error) {
	sessions := make(map[string]bool, cfg.agents)
	for a := range cfg.agents {
		sessions[sessionID(cfg.sessionPrefix, a)] = true
	}
	sem := make(chan struct{}, 32)
	s, err := nc.Subscribe(subj.AskAll(), func(m *nats.Msg) {
		var q messages.ApprovalNeeded
		if err := json.Unmarshal(m.Data, &q); err != nil || !sessions[q.Request.SessionID] {
			return
		}
		ap.mu.Lock()
		dup := ap.seen[q.Request.RequestID]
		ap.seen[q.Request.RequestID] = true
		if !dup {
			ap.questions++
		}
		ap.mu.Unlock()
		if dup {
			return // asked again (another team, or a quorum update)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			approve(ctx, nc, subj, cfg.approver, q, ap)
		}()
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to questions: %w", err)
	}
	return s, nil
}

// runAgents runs every agent's schedule of calls and waits for them.
func runAgents(ctx context.Context, cfg *config, conns []*nats.Conn, led *ledger) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for a := range cfg.agents {
		sid := sessionID(cfg.sessionPrefix, a)
		c, err := client.New(conns[a%len(conns)],
			client.WithSession(sid),
			client.WithAgent(sid),
			client.WithPrefix(cfg.prefix),
			client.WithRequestedBy(cfg.requestedBy))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range cfg.mix.schedule(a, cfg.requests) {
				if ctx.Err() != nil {
					return
				}
				spec := cfg.calls[k]
				call := client.Call{
					RequestID:   nuid.Next(),
					CallID:      "call-" + strconv.Itoa(i),
					Tool:        spec.Tool,
					Arguments:   spec.Arguments,
					Description: "loadagent " + string(k) + " call",
				}
				if k == kindAsk {
					call.TTL = cfg.askTTL
				}
				led.add(call.RequestID, k)
				t0 := time.Now()
				d, err := c.Request(ctx, call)
				led.done(call.RequestID, time.Since(t0), d, err)
			}
		}()
	}
	return nil
}

// approve answers question q as approver id, approving once, and counts the
// broker's reply in st. It retries while no broker answers.
func approve(ctx context.Context, nc *nats.Conn, subj messages.Subjects, id string, q messages.ApprovalNeeded, st *approverStats) {
	resp := messages.Response{
		V:         messages.Version,
		RequestID: q.Request.RequestID,
		SessionID: q.Request.SessionID,
		Approver:  messages.Approver{ID: id, Display: id, Channel: "loadagent", Device: "loadagent"},
		Approved:  true,
		Scope:     messages.ScopeOnce,
		// The version of the question approved: the brokers refuse an
		// approval that names none.
		Digest: q.Digest,
	}
	data, err := json.Marshal(resp)
	if err != nil {
		st.fail(q.Request.RequestID, err)
		return
	}
	retry := backoff.Policy{Min: 50 * time.Millisecond, Max: time.Second}
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		msg, err := nc.RequestWithContext(actx, subj.Respond(), data)
		cancel()
		if err == nil {
			st.reply(q.Request.RequestID, msg.Data)
			return
		}
		if ctx.Err() != nil || !(errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)) {
			st.fail(q.Request.RequestID, err)
			return
		}
		if err := backoff.Sleep(ctx, retry.Delay(n)); err != nil {
			st.fail(q.Request.RequestID, err)
			return
		}
	}
}

func (st *approverStats) reply(id string, data []byte) {
	if rep, ok := messages.IsErrorReply(data); ok {
		st.fail(id, rep.Err())
		return
	}
	var rr messages.RespondReply
	if err := json.Unmarshal(data, &rr); err != nil {
		st.fail(id, fmt.Errorf("bad respond reply: %w", err))
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if rr.Applied {
		st.applied++
	} else {
		// Not an error by itself (the question may have expired first),
		// but a refusal for membership shows here with its reason.
		st.refused++
		if rr.Reason != "" && rr.State == messages.StatePending {
			st.errors = append(st.errors, fmt.Sprintf("approver: %s: refused: %s", id, rr.Reason))
		}
	}
}

func (st *approverStats) fail(id string, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.errors = append(st.errors, fmt.Sprintf("approver: %s: %v", id, err))
}
