package channeltest

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The helpers below serve channels' own end-to-end tests (what the suite
// does not cover: a service's rate limits, signatures, quorum counts), so
// that they share one harness instead of pasting it.

// Logger returns a debug logger writing to a buffer, for channels under
// test (Bot checks the buffer for secrets).
func Logger() (*slog.Logger, *brokertest.LogBuffer) {
	logs := &brokertest.LogBuffer{}
	return slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), logs
}

// Bot is a bot with one channel on a plane, started when the first
// question exists (so its start-up replay lists it, whatever the timing).
type Bot struct {
	// Device is an approver device of teams default and oncall; Agent an
	// agent of session s1, agent a1.
	Device *brokertest.Approver
	Agent  *client.Client

	once sync.Once
	run  func()
}

// NewBot prepares a bot with ch on p. When the test ends, the logs must
// hold none of secrets.
func NewBot(t *testing.T, p *brokertest.Plane, cfg *approverbot.Config, ch approverbot.Channel, log *slog.Logger, logs *brokertest.LogBuffer, secrets ...string) *Bot {
	t.Helper()
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), []approverbot.Channel{ch}, approverbot.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	b := &Bot{Device: p.Approver("default", "oncall"), Agent: p.Agent("s1", "a1")}
	b.run = func() {
		t.Cleanup(func() { // after the bot stopped
			for _, s := range secrets {
				if s != "" && strings.Contains(logs.String(), s) {
					t.Errorf("a secret (%.4s…) appears in the logs:\n%s", s, logs.String())
				}
			}
		})
		brokertest.Run(t, "bot.Run", bot.Run)
	}
	return b
}

// Ask has the agent ask about a bash command, waits until the question is
// pending (the device saw it), then starts the bot if it is not running.
func (b *Bot) Ask(t *testing.T, id, command string) (*brokertest.Pending, messages.ApprovalNeeded) {
	t.Helper()
	pend := brokertest.Ask(t.Context(), b.Agent, id, "bash", brokertest.Bash(command))
	q := b.Device.NextAsk(id)
	b.once.Do(b.run)
	return pend, q
}

// Next waits for the next value on c.
func Next[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(Wait):
		t.Fatalf("no %s within %s", what, Wait)
	}
	var zero T
	return zero
}

// NextFor waits for the next value on c that matches.
func NextFor[T any](t *testing.T, c <-chan T, what string, match func(T) bool) T {
	t.Helper()
	deadline := time.After(Wait)
	for {
		select {
		case v := <-c:
			if match(v) {
				return v
			}
		case <-deadline:
			t.Fatalf("no %s within %s", what, Wait)
		}
	}
}
