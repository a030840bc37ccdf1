package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// workload makes requests shaped like the broker's: nuid request and
// session ids (what the SDK generates), an agent (pod) per ten requests,
// four teams,
// and as payload the approval_needed question of a shell command, about
// 700 bytes of JSON that varies from request to request.
type workload struct {
	run        string // makes agent ids unique to the workload
	perSession int
	teams      []string
	n          atomic.Int64
	sessions   []string
	mu         sync.Mutex
}

func newWorkload(perSession int) *workload {
	return &workload{run: nuid.Next()[12:], perSession: perSession, teams: []string{"default", "platform", "security", "data"}}
}

var commands = []string{
	"git push origin %s --force-with-lease",
	"kubectl -n %s rollout restart deployment/api",
	"rm -rf build/%s && npm run build",
	"terraform apply -auto-approve -target=module.%s",
	"docker compose -p %s up -d --build",
}

func (w *workload) request(ttl time.Duration) session.Request {
	i := w.n.Add(1) - 1
	w.mu.Lock()
	for int(i/int64(w.perSession)) >= len(w.sessions) {
		w.sessions = append(w.sessions, nuid.Next())
	}
	sess := w.sessions[i/int64(w.perSession)]
	w.mu.Unlock()
	id := nuid.Next()
	agent := fmt.Sprintf("pod-%s-%d", w.run, i/10)
	team := w.teams[int(i)%len(w.teams)]
	cmd := fmt.Sprintf(commands[int(i)%len(commands)], fmt.Sprintf("feature-%x", rand.Uint32()))
	q := messages.ApprovalNeeded{
		V: messages.Version, Type: "approval_needed",
		Request: messages.Request{
			V: messages.Version, RequestID: id, SessionID: sess, AgentID: agent, RequestedBy: "alice@example.com",
			CallID: fmt.Sprintf("call_%08x", rand.Uint32()), Tool: "bash",
			Arguments:   json.RawMessage(fmt.Sprintf(`{"command":%q}`, cmd)),
			Description: "Deploy the change the user asked for",
		},
		Team: team,
		Risk: messages.Risk{Tier: "exec", Rule: "Bash(*)", Reason: "exec tools ask in always-ask mode",
			Subcommands: []messages.Verdict{{Command: cmd, Action: "ask"}}},
		ExpiresAt:         time.Unix(1_800_000_000+int64(i), 0).UTC(),
		ApprovalsRequired: 1,
		Always:            &messages.AlwaysGrant{Scope: messages.ScopeAlwaysPrefix, Tool: "bash", Patterns: []string{"git push *"}},
	}
	return session.Request{
		ID: id, SessionID: sess, AgentID: agent, RequestedBy: "alice@example.com", Tool: "bash",
		Teams: []string{team}, ApprovalsRequired: 1, TTL: ttl, Question: q,
	}
}

// createMany stores n requests of w with ttl, from workers goroutines, and
// returns them.
func createMany(tb testing.TB, s session.Store, w *workload, n int, ttl time.Duration) []*session.Record {
	tb.Helper()
	return storeMany(tb, s, w, n, ttl, false)
}

// storeMany stores n pending requests as the broker does: Prepare, then
// Open. The Open's outbox entry is acknowledged, except with twoStep, where
// it stays (nobody acknowledged it: the worst case).
func storeMany(tb testing.TB, s session.Store, w *workload, n int, ttl time.Duration, twoStep bool) []*session.Record {
	tb.Helper()
	const workers = 32
	recs := make([]*session.Record, n)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				rec, created, err := s.Prepare(context.Background(), w.request(ttl))
				if err != nil || !created {
					failed.Store(fmt.Errorf("Prepare: created %v, %v", created, err))
					return
				}
				res, err := s.Open(context.Background(), rec.SessionID, rec.ID)
				if err != nil || !res.Applied {
					failed.Store(fmt.Errorf("Open: %+v, %v", res, err))
					return
				}
				rec = res.Record
				if !twoStep {
					if err := s.AckEffects(context.Background(), rec); err != nil {
						failed.Store(fmt.Errorf("AckEffects: %v", err))
						return
					}
				}
				recs[i] = rec
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
	return recs
}
