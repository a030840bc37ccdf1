package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// storeCopy is a replica's copy of a small set the store keeps whole and
// every replica reads in the background: the fleet stops (fleet.go) and
// the breaker trips (breakers.go). It is read again every fleetRefresh and
// when a broadcast says it changed; a copy older than fleetStale is not
// trusted (the caller fails closed), and the one call that finds it stale
// reads it again itself, so a store that just came back (a restarted
// Redis) serves the truth at once instead of after the next tick.
type storeCopy[T any] struct {
	read func(context.Context) ([]T, error)
	// timeout bounds a read the call path makes itself (readStale).
	timeout time.Duration
	// reading is held by the one call that reads a stale copy again.
	reading sync.Mutex

	mu     sync.RWMutex
	items  []T       // replaced whole by each read, never changed in place
	readAt time.Time // zero until the first read
	err    error     // the last read's error, if it failed
}

// fresh returns the copy, or an error when it is stale (never read, or
// not read for fleetStale). The slice is shared: read it, do not change it.
func (c *storeCopy[T]) fresh() ([]T, error) {
	c.readStale()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if age := time.Since(c.readAt); c.readAt.IsZero() || age > fleetStale {
		if c.err != nil {
			return nil, fmt.Errorf("not read for %s: %w", age.Truncate(time.Millisecond), c.err)
		}
		return nil, errors.New("not read yet")
	}
	return c.items, nil
}

// readStale reads the set again now when the copy is stale and no other
// call is reading it; the others answer from the copy (stale: an error).
func (c *storeCopy[T]) readStale() {
	c.mu.RLock()
	stale := c.readAt.IsZero() || time.Since(c.readAt) > fleetStale
	c.mu.RUnlock()
	if !stale || c.timeout <= 0 || !c.reading.TryLock() {
		return
	}
	defer c.reading.Unlock()
	_ = c.refresh(context.Background(), c.timeout)
}

// refresh reads the set from the store.
func (c *storeCopy[T]) refresh(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	items, err := c.read(ctx)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.err = err
		return err
	}
	c.items, c.readAt, c.err = items, time.Now(), nil
	return nil
}
