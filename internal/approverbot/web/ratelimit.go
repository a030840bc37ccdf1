package web

import (
	"sync"
	"time"
)

// limiter is a set of token buckets keyed by a string (an approver id and an
// address). Each bucket holds up to burst tokens and regains one every
// `every`; an attempt takes a token. Buckets that refilled completely are
// forgotten by sweep, so the table stays as small as the recent failures.
// Safe for concurrent use.
type limiter struct {
	burst float64
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(burst int, every time.Duration, now func() time.Time) *limiter {
	return &limiter{burst: float64(burst), every: every, now: now, buckets: map[string]*bucket{}}
}

// take spends a token of key's bucket. When the bucket is empty it returns
// false and how long until the next token.
func (l *limiter) take(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.refill(key, now)
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) * float64(l.every))
	}
	b.tokens--
	return true, 0
}

// reset forgets key's bucket (a successful login clears its failures).
func (l *limiter) reset(key string) {
	l.mu.Lock()
	delete(l.buckets, key)
	l.mu.Unlock()
}

// sweep forgets the buckets that are full again.
func (l *limiter) sweep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for k := range l.buckets {
		if l.refill(k, now).tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// refill brings key's bucket up to date; callers hold mu.
func (l *limiter) refill(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
		return b
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(l.burst, b.tokens+float64(el)/float64(l.every))
		b.last = now
	}
	return b
}
