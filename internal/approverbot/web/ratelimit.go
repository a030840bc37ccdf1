package web

import (
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

	table[*bucket]
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(burst int, every time.Duration, now func() time.Time) *limiter {
	return &limiter{burst: float64(burst), every: every, now: now, table: newTable[*bucket]()}
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

// refund gives back the token an attempt took with take, when the
// attempt turned out to cost nothing (a successful sign-in, or one refused
// for another reason before its password was checked).
func (l *limiter) refund(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(key, l.now())
	b.tokens = min(l.burst, b.tokens+1)
}

// reset forgets key's bucket (a successful login clears its failures).
func (l *limiter) reset(key string) { l.remove(key) }

// sweep forgets the buckets that are full again.
func (l *limiter) sweep() {
	now := l.now()
	l.removeIf(func(k string, _ *bucket) bool { return l.refill(k, now).tokens >= l.burst })
}

// refill brings key's bucket up to date; callers hold mu.
func (l *limiter) refill(key string, now time.Time) *bucket {
	b, ok := l.m[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.m[key] = b
		return b
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(l.burst, b.tokens+float64(el)/float64(l.every))
		b.last = now
	}
	return b
}

// backoff slows the guessing of one account's password, whatever the
// addresses the guesses come from, without locking the account's owner
// out: the first free failures cost nothing, each one after makes the
// account wait twice as long before its next attempt (from base, at most
// max), and a success or a quiet spell (forget) clears it. The owner is at
// worst max away from a sign-in. Safe for concurrent use.
type backoff struct {
	free      int
	base, max time.Duration
	forget    time.Duration
	now       func() time.Time

	// table holds the accounts' failures; its mu guards checking too.
	table[*failures]
	// checking holds the accounts whose password is being checked: one
	// attempt per account at a time, so that guesses sent at once cannot
	// all pass the wait before any of them is recorded as failed.
	checking map[string]bool
}

type failures struct {
	n     int
	last  time.Time // of the latest failure
	until time.Time // no attempt before
}

func newBackoff(free int, base, max, forget time.Duration, now func() time.Time) *backoff {
	return &backoff{free: free, base: base, max: max, forget: forget, now: now, table: newTable[*failures](), checking: map[string]bool{}}
}

// begin starts an attempt on account: ok when it may check the password
// now, else how long to wait — the account's backoff, or, while another
// attempt on it is being checked, a short while. Every begin that returns
// ok is followed by one end.
func (b *backoff) begin(account string) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.checking[account] {
		return time.Second, false
	}
	if f := b.get(account); f != nil {
		if w := f.until.Sub(b.now()); w > 0 {
			return w, false
		}
	}
	b.checking[account] = true
	return 0, true
}

// end ends the attempt begin started, recording its outcome.
func (b *backoff) end(account string, ok bool) {
	if ok {
		b.succeeded(account)
	} else {
		b.failed(account)
	}
	b.mu.Lock()
	delete(b.checking, account)
	b.mu.Unlock()
}

// failed records a failed attempt on account.
func (b *backoff) failed(account string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	f := b.get(account)
	if f == nil {
		f = &failures{}
		b.m[account] = f
	}
	f.n++
	f.last = now
	if over := f.n - b.free; over > 0 {
		d := b.base << min(over-1, 30)
		if d <= 0 || d > b.max {
			d = b.max
		}
		f.until = now.Add(d)
	}
}

// succeeded clears account's failures.
func (b *backoff) succeeded(account string) { b.remove(account) }

// sweep forgets the accounts whose failures are older than forget.
func (b *backoff) sweep() { b.removeIf(func(_ string, f *failures) bool { return b.stale(f) }) }

// get is account's failures, nil once forgotten; callers hold mu.
func (b *backoff) get(account string) *failures {
	f, ok := b.m[account]
	if !ok {
		return nil
	}
	if b.stale(f) {
		delete(b.m, account)
		return nil
	}
	return f
}

// stale reports whether failures f are forgotten: older than forget and
// past their wait.
func (b *backoff) stale(f *failures) bool {
	now := b.now()
	return now.Sub(f.last) > b.forget && !now.Before(f.until)
}
