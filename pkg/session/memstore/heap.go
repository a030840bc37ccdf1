package memstore

import (
	"container/heap"
	"time"
)

// timer is one entry of a deadlines heap. index is its position in the heap,
// -1 when it is not in one, so that removal and re-keying cost O(log n).
type timer[T any] struct {
	at    time.Time
	seq   uint64 // tie-break: equal deadlines pop in insertion order
	index int
	v     T
}

// deadlines is a min-heap of timers ordered by deadline.
type deadlines[T any] struct{ h timers[T] }

func (d *deadlines[T]) len() int { return len(d.h) }

func (d *deadlines[T]) add(t *timer[T]) { heap.Push(&d.h, t) }

// peek returns the earliest timer, or nil.
func (d *deadlines[T]) peek() *timer[T] {
	if len(d.h) == 0 {
		return nil
	}
	return d.h[0]
}

// popDue removes and returns the earliest timer if its deadline is not after
// now, else nil.
func (d *deadlines[T]) popDue(now time.Time) *timer[T] {
	if t := d.peek(); t != nil && !now.Before(t.at) {
		return heap.Pop(&d.h).(*timer[T])
	}
	return nil
}

func (d *deadlines[T]) remove(t *timer[T]) {
	if t != nil && t.index >= 0 {
		heap.Remove(&d.h, t.index)
	}
}

// reset moves t to a new deadline.
func (d *deadlines[T]) reset(t *timer[T], at time.Time) {
	t.at = at
	heap.Fix(&d.h, t.index)
}

type timers[T any] []*timer[T]

func (h timers[T]) Len() int { return len(h) }

func (h timers[T]) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}

func (h timers[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timers[T]) Push(x any) {
	t := x.(*timer[T])
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timers[T]) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
