package approverbot

import "sync"

// Queue hands values from the goroutines that push them to the one that
// takes them, in order and without blocking the pusher: the bot's
// deliveries to a channel, the terminal's questions for its prompt. It is
// unbounded, as dropping a resolution would leave a settled question
// open. Create it with [NewQueue].
type Queue[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{}
}

// NewQueue returns an empty queue.
func NewQueue[T any]() *Queue[T] { return &Queue[T]{ready: make(chan struct{}, 1)} }

// Push adds v and wakes the taker.
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Ready receives after a Push (one wake-up for any number of pushes since
// the last one taken): the taker then calls Take.
func (q *Queue[T]) Ready() <-chan struct{} { return q.ready }

// Take removes and returns every value queued, oldest first.
func (q *Queue[T]) Take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
