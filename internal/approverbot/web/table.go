package web

import "sync"

// table is a map keyed by a string and guarded by its mutex: the state of
// the sign-in limiter, the password backoff and the sessions, each of
// which forgets an entry on demand and sweeps the stale ones.
type table[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func newTable[V any]() table[V] { return table[V]{m: map[string]V{}} }

// put stores v under key.
func (t *table[V]) put(key string, v V) {
	t.mu.Lock()
	t.m[key] = v
	t.mu.Unlock()
}

// remove forgets key.
func (t *table[V]) remove(key string) {
	t.mu.Lock()
	delete(t.m, key)
	t.mu.Unlock()
}

// removeIf forgets the entries for which stale holds; stale runs with mu
// held.
func (t *table[V]) removeIf(stale func(key string, v V) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range t.m {
		if stale(k, v) {
			delete(t.m, k)
		}
	}
}
