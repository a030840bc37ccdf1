package approverbot

import (
	"context"
	"sync"
)

// ServeWorkers starts n goroutines that each take values from in and hand
// them to handle, one at a time, until ctx is done: the workers of a
// channel whose clicks or taps arrive on a queue. The returned wait blocks
// until every worker has returned (a worker finishes the value it holds
// first).
func ServeWorkers[T any](ctx context.Context, n int, in <-chan T, handle func(T)) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case v := <-in:
					handle(v)
				}
			}
		}()
	}
	return wg.Wait
}
