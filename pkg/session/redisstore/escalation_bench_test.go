package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// BenchmarkPrepareLadder compares Prepare of a question without and with a
// three-step escalation ladder (the steps scheduled in the create script,
// the escalation index marked in the same pipeline), on one server.
func BenchmarkPrepareLadder(b *testing.B) {
	srv := testenv.Redis(b)
	s := newStore(b, options(srv.URL(), time.Hour))
	ladder := []messages.EscalationStep{{AfterMS: 120_000, Remind: true}, {AfterMS: 300_000, AddTeam: "oncall-secondary"}, {AfterMS: 600_000, Page: "oncall-pd"}}
	due := []time.Duration{2 * time.Minute, 5 * time.Minute, 10 * time.Minute}
	for _, tc := range []struct {
		name  string
		steps bool
	}{{"none", false}, {"three-steps", true}} {
		b.Run(tc.name, func(b *testing.B) {
			w := newWorkload(10)
			reqs := make([]session.Request, 0, 1024)
			ctx := context.Background()
			for b.Loop() {
				if len(reqs) == 0 {
					b.StopTimer()
					for range cap(reqs) {
						req := w.request(time.Hour)
						if tc.steps {
							req.Question.Escalation, req.Escalation = ladder, due
						}
						reqs = append(reqs, req)
					}
					b.StartTimer()
				}
				req := reqs[len(reqs)-1]
				reqs = reqs[:len(reqs)-1]
				if _, created, err := s.Prepare(ctx, req); err != nil || !created {
					b.Fatalf("Prepare: created %v, %v", created, err)
				}
			}
		})
	}
}
