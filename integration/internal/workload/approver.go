package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Approver is one approver device speaking the approver protocol over NATS:
// it takes the team's questions from signoff.v1.ask.<team> (and, when Poll
// is set, from signoff.v1.pending.<team>, which recovers questions
// published while it was disconnected) and answers each on
// signoff.v1.respond, retrying until a broker replies.
type Approver struct {
	// ID is the approver id (a member of the team); Device names the
	// device.
	ID, Device string
	Conn       *nats.Conn
	// Prefix is the subject prefix (default signoff.v1); Team the team
	// (default "default").
	Prefix, Team string
	// Queue, when set, makes the devices of one queue share the questions
	// (a pool of answering workers); otherwise every device sees every
	// question, as the devices of an on-call team do.
	Queue string
	// Think is the time a human takes before answering.
	Think time.Duration
	// Decide returns whether to approve (default Approves of the id).
	Decide func(q *messages.ApprovalNeeded) bool
	// Poll is how often to ask for the team's open questions (0: never).
	Poll time.Duration
	// Attempt bounds each respond attempt (default 1 s).
	Attempt time.Duration
	// Ledger records the questions seen and the answers sent.
	Ledger *Ledger

	mu   sync.Mutex
	seen map[string]bool
}

// Run answers questions until ctx ends, then waits for the answers under
// way.
func (a *Approver) Run(ctx context.Context) error {
	if a.Prefix == "" {
		a.Prefix = messages.DefaultPrefix
	}
	if a.Team == "" {
		a.Team = "default"
	}
	if a.Decide == nil {
		a.Decide = func(q *messages.ApprovalNeeded) bool { return Approves(q.Request.RequestID) }
	}
	if a.Attempt == 0 {
		a.Attempt = time.Second
	}
	a.seen = map[string]bool{}
	var wg sync.WaitGroup
	defer wg.Wait()
	handle := func(q messages.ApprovalNeeded) {
		id := q.Request.RequestID
		a.mu.Lock()
		dup := a.seen[id]
		a.seen[id] = true
		a.mu.Unlock()
		if dup || !a.Ledger.Knows(id) {
			return
		}
		a.Ledger.Question(id)
		wg.Go(func() { a.answer(ctx, &q) })
	}

	questions := make(chan *nats.Msg, 1024)
	subject := a.Prefix + ".ask." + a.Team
	var sub *nats.Subscription
	var err error
	if a.Queue != "" {
		sub, err = a.Conn.ChanQueueSubscribe(subject, a.Queue, questions)
	} else {
		sub, err = a.Conn.ChanSubscribe(subject, questions)
	}
	if err != nil {
		return fmt.Errorf("approver %s: subscribe: %w", a.ID, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := a.Conn.Flush(); err != nil {
		return fmt.Errorf("approver %s: %w", a.ID, err)
	}

	var poll <-chan time.Time
	if a.Poll > 0 {
		t := time.NewTicker(a.Poll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-questions:
			var q messages.ApprovalNeeded
			if json.Unmarshal(m.Data, &q) == nil && q.Type == "approval_needed" {
				handle(q)
			}
		case <-poll:
			for _, q := range a.pending(ctx) {
				handle(q)
			}
		}
	}
}

func (a *Approver) pending(ctx context.Context) []messages.ApprovalNeeded {
	data, _ := json.Marshal(messages.PendingRequest{V: messages.Version})
	rctx, cancel := context.WithTimeout(ctx, a.Attempt)
	defer cancel()
	m, err := a.Conn.RequestWithContext(rctx, a.Prefix+".pending."+a.Team, data)
	if err != nil {
		return nil
	}
	var rep messages.PendingReply
	if _, isErr := messages.IsErrorReply(m.Data); isErr || json.Unmarshal(m.Data, &rep) != nil {
		return nil
	}
	return rep.Questions
}

func (a *Approver) answer(ctx context.Context, q *messages.ApprovalNeeded) {
	if a.Think > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(a.Think):
		}
	}
	resp := messages.Response{
		V:         messages.Version,
		RequestID: q.Request.RequestID,
		SessionID: q.Request.SessionID,
		Approver:  messages.Approver{ID: a.ID, Channel: "nats", Device: a.Device},
		Approved:  a.Decide(q),
		// What this approver was shown: the brokers refuse an approval
		// that names no digest.
		Digest: q.Digest,
	}
	if resp.Approved {
		resp.Scope = messages.ScopeOnce
	} else {
		resp.RejectMode = messages.RejectSoft
		resp.Feedback = "not this one"
	}
	// Keep trying a little past the expiry: the reaper's timeout may race
	// the answer, and either outcome is fine as long as there is one.
	deadline := q.ExpiresAt.Add(2 * time.Second)
	if q.ExpiresAt.IsZero() {
		deadline = time.Now().Add(time.Minute)
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rep, err := Respond(rctx, a.Conn, a.Prefix, resp, a.Attempt)
	ans := Answer{Approver: a.ID, Device: a.Device, Approved: resp.Approved, RejectMode: resp.RejectMode, Err: err, At: time.Now()}
	if err == nil {
		ans.Reply = &rep
	}
	a.Ledger.Answered(resp.RequestID, ans)
}

// Respond sends resp on prefix.respond and returns the broker's reply. It
// retries, with the same response, while no broker answers in attempt or
// the broker's store is unavailable, until ctx ends; other error replies
// are returned at once.
func Respond(ctx context.Context, nc *nats.Conn, prefix string, resp messages.Response, attempt time.Duration) (messages.RespondReply, error) {
	data, err := json.Marshal(resp)
	if err != nil {
		return messages.RespondReply{}, err
	}
	retry := backoff.Policy{Min: 50 * time.Millisecond, Max: 500 * time.Millisecond}
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, attempt)
		m, err := nc.RequestWithContext(actx, prefix+".respond", data)
		cancel()
		if err == nil {
			if e, isErr := messages.IsErrorReply(m.Data); isErr {
				err = e.Err()
				if e.Error.Code != messages.CodeUnavailable {
					return messages.RespondReply{}, err
				}
			} else {
				var rep messages.RespondReply
				if err := json.Unmarshal(m.Data, &rep); err != nil {
					return messages.RespondReply{}, fmt.Errorf("bad respond reply: %w", err)
				}
				return rep, nil
			}
		}
		if ctx.Err() != nil {
			return messages.RespondReply{}, fmt.Errorf("respond %s: %w (last error: %v)", resp.RequestID, ctx.Err(), err)
		}
		if !client.Retryable(err) {
			return messages.RespondReply{}, fmt.Errorf("respond %s: %w", resp.RequestID, err)
		}
		_ = backoff.Sleep(ctx, retry.Delay(n)) // ctx's end is reported by the next pass
	}
}
