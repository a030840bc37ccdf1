package channeltest

import (
	"sync"
	"testing"
	"time"
)

// Board keeps the latest message of each question a fake service received
// (posted, then updated), for harnesses that read a chat's messages.
type Board[M any] struct {
	// Sources are the fake's channels of new and edited messages.
	Sources []<-chan M
	// ID names the question a message shows ("" when it cannot tell).
	ID func(M) string
	// Same reports whether two messages are one message (an edit).
	Same func(a, b M) bool

	mu     sync.Mutex
	latest map[string]M
}

// Await waits until question id's latest message satisfies done.
func (b *Board[M]) Await(t *testing.T, id string, done func(M) bool) M {
	t.Helper()
	deadline := time.After(Wait)
	for {
		b.mu.Lock()
		if b.latest == nil {
			b.latest = map[string]M{}
		}
		m, ok := b.latest[id]
		b.mu.Unlock()
		if ok && done(m) {
			return m
		}
		var got M
		select {
		case got = <-b.source(0):
		case got = <-b.source(1):
		case <-deadline:
			t.Fatalf("question %s never showed as wanted; last: %+v", id, m)
		}
		b.mu.Lock()
		for qid, prev := range b.latest {
			if b.Same(prev, got) {
				b.latest[qid] = got
			}
		}
		if qid := b.ID(got); qid != "" {
			b.latest[qid] = got
		}
		b.mu.Unlock()
	}
}

// source is the i-th source, or a channel that never delivers.
func (b *Board[M]) source(i int) <-chan M {
	if i < len(b.Sources) {
		return b.Sources[i]
	}
	return nil
}
