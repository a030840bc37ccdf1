package approverbot

import (
	"context"
	"log/slog"
	"time"

	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// event is one thing a channel must show.
type event struct {
	ask      *Question
	resolved *messages.Resolved
}

// pump delivers events to one channel in order, on its own goroutine, so a
// slow channel (a rate-limited chat API) delays only itself. The queue is
// unbounded: dropping a resolution would leave buttons live on a settled
// question.
type pump struct{ q *Queue[event] }

func newPump() *pump { return &pump{q: NewQueue[event]()} }

func (p *pump) push(e event) { p.q.Push(e) }

// pumpBackoff spaces the three attempts of a delivery: 200 ms, then 400 ms.
var pumpBackoff = backoff.Policy{Min: 200 * time.Millisecond, Max: 400 * time.Millisecond}

// run delivers until ctx is done. A failed delivery is retried a few times
// with backoff, then logged and dropped: the channel's next replay shows the
// current state again.
func (p *pump) run(ctx context.Context, ch Channel, log *slog.Logger, m *Metrics) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.q.Ready():
		}
		for _, e := range p.q.Take() {
			for attempt := 1; ; attempt++ {
				var err error
				if e.ask != nil {
					err = ch.Ask(ctx, *e.ask)
				} else {
					err = ch.Resolve(ctx, *e.resolved)
				}
				if err == nil && e.ask != nil {
					m.QuestionsShown.WithLabelValues(ch.Name()).Inc()
				}
				if err == nil || ctx.Err() != nil {
					break
				}
				if attempt == 3 {
					m.DeliveryFailures.WithLabelValues(ch.Name()).Inc()
					log.Error("channel delivery failed", "channel", ch.Name(), "err", err)
					break
				}
				if backoff.Sleep(ctx, pumpBackoff.Delay(attempt)) != nil {
					return
				}
			}
		}
	}
}
