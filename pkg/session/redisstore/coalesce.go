package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// reads coalesces the hot-path reads of concurrent Lookups, the way a
// database's group commit coalesces log writes: while fewer than limit
// round trips are in flight, a Lookup sends its commands at once on its own
// goroutine, exactly as without coalescing; once limit round trips are in
// flight, further Lookups queue, and when a round trip ends the whole queue
// goes out in one pipeline. Under load a replica thus makes one write and
// one read syscall, and Redis one of each, per batch instead of per request,
// and a lone request never waits for a batch. A queued Lookup waits at most
// for one round trip to end before its own is sent.
//
// Only Lookup goes through it: its commands are reads (GETEX refreshes a
// TTL) whose order relative to other requests' commands does not matter.
// The transitions keep round trips of their own.
type reads struct {
	rdb     redis.UniversalClient
	timeout time.Duration // bounds a batch, which outlives its callers' contexts
	limit   int

	mu       sync.Mutex
	inFlight int
	queue    []*queuedRead
}

type queuedRead struct {
	cmds []redis.Cmder
	done chan struct{} // closed once every command holds its result or error
}

// do runs cmds in one round trip, alone or with other Lookups' commands,
// and returns once each command holds its result or error. If ctx ends
// while the commands wait in the queue, do returns ctx's error at once; the
// commands are still sent, and their results dropped.
func (r *reads) do(ctx context.Context, cmds []redis.Cmder) error {
	r.mu.Lock()
	if r.inFlight < r.limit {
		r.inFlight++
		r.mu.Unlock()
		r.exec(ctx, cmds)
		r.release()
		return nil
	}
	q := &queuedRead{cmds: cmds, done: make(chan struct{})}
	r.queue = append(r.queue, q)
	r.mu.Unlock()
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exec sends cmds in one round trip and leaves every outcome on the
// commands. go-redis sets a failed round trip's error on each command; an
// error that reaches exec on no command (a client hook that refuses the
// call, say) is set on those that hold none, so that no command reads as
// an empty success.
func (r *reads) exec(ctx context.Context, cmds []redis.Cmder) {
	var err error
	if len(cmds) == 1 {
		err = r.rdb.Process(ctx, cmds[0])
	} else {
		p := r.rdb.Pipeline()
		for _, c := range cmds {
			_ = p.Process(ctx, c)
		}
		_, err = p.Exec(ctx)
	}
	if err == nil || errors.Is(err, redis.Nil) {
		return
	}
	for _, c := range cmds {
		if c.Err() == err {
			return // one command's own error, not the round trip's
		}
	}
	for _, c := range cmds {
		if c.Err() == nil {
			c.SetErr(err)
		}
	}
}

// release ends a round trip. If Lookups queued meanwhile, a goroutine of
// their own sends them (the caller returns now) and keeps the round trip's
// slot until the queue is empty.
func (r *reads) release() {
	if batch := r.next(); batch != nil {
		go r.drain(batch)
	}
}

// next takes the queue as the next batch, or gives up the round trip's
// slot and returns nil when no Lookup waits.
func (r *reads) next() []*queuedRead {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		r.inFlight--
		return nil
	}
	batch := r.queue
	r.queue = nil
	return batch
}

func (r *reads) drain(batch []*queuedRead) {
	var cmds []redis.Cmder
	for batch != nil {
		cmds = cmds[:0]
		for _, q := range batch {
			cmds = append(cmds, q.cmds...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		r.exec(ctx, cmds)
		cancel()
		for _, q := range batch {
			close(q.done)
		}
		batch = r.next()
	}
}
