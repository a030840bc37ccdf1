package approverbot

import (
	"fmt"
	"sync"
	"time"
)

// DefaultTapGuard is the chat channels' default [TapGuard] window.
const DefaultTapGuard = 1500 * time.Millisecond

// A TapGuard holds back approving taps in a chat conversation (a Slack
// channel, a Telegram chat) whose messages just changed. A chat client
// lays its messages out one under the other and keeps the newest in
// view: a message the bot sends, edits (a settled question loses its
// buttons) or receives moves the others, so a tap aimed at one
// question's Approve can land on another's. The web page sees its own
// layout and guards in the browser; a chat's layout is the client's, so
// the bot judges by time: an approving tap that reaches it while one of
// its own changes to the conversation is on its way, or less than the
// window after one, is refused and the approver asked to look again.
// Rejections are never held back.
//
// The window is measured from when the change was acknowledged to when
// the tap arrived, which includes both deliveries: it must be longer than
// the reading time it stands for. Changes the bot does not see (other
// people's messages in a Slack channel) do not count.
//
// A nil *TapGuard, or one with a window of zero or less, refuses nothing.
type TapGuard struct {
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	convs map[string]*convChange
}

// convChange is what a TapGuard knows of one conversation.
type convChange struct {
	last time.Time // when the latest change was acknowledged
	busy int       // changes on their way
}

// NewTapGuard returns a guard with the given window (0 or less: off) and
// clock (nil: time.Now).
func NewTapGuard(window time.Duration, now func() time.Time) *TapGuard {
	if now == nil {
		now = time.Now
	}
	return &TapGuard{window: window, now: now, convs: map[string]*convChange{}}
}

// Change marks a change to conversation conv as on its way (a message
// being sent or edited); call the returned function when the call
// returns, whether it succeeded or not (a failed call may still have
// changed the conversation).
func (g *TapGuard) Change(conv string) (done func()) {
	if g == nil || g.window <= 0 {
		return func() {}
	}
	g.mu.Lock()
	c := g.convs[conv]
	if c == nil {
		g.pruneLocked()
		c = &convChange{}
		g.convs[conv] = c
	}
	c.busy++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			c.busy--
			c.last = g.now()
			g.mu.Unlock()
		})
	}
}

// Changed records a change to conv that has already happened (a message
// the bot received).
func (g *TapGuard) Changed(conv string) { g.Change(conv)() }

// Refusal says why an approving tap in conv is held back now, or "".
func (g *TapGuard) Refusal(conv string) string {
	if g == nil || g.window <= 0 {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.convs[conv]
	switch {
	case c == nil:
		return ""
	case c.busy > 0:
		return "The messages here are changing right now (a question arrived or was updated), so this tap may have been meant for another question: nothing was sent. Look at the question and tap again."
	}
	since := g.now().Sub(c.last)
	if since >= g.window {
		return ""
	}
	return fmt.Sprintf("The messages here changed %.1f s ago (a question arrived or was updated), so this tap may have been meant for another question: nothing was sent. Look at the question and tap again.", since.Seconds())
}

// pruneLocked forgets quiet conversations once there are many: a bot
// serves a handful, but a Telegram bot hears from any chat it is added to.
func (g *TapGuard) pruneLocked() {
	if len(g.convs) < 256 {
		return
	}
	now := g.now()
	for k, c := range g.convs {
		if c.busy == 0 && now.Sub(c.last) >= g.window {
			delete(g.convs, k)
		}
	}
}
