package testenv

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// LogBuffer collects log output written from several goroutines, so a test
// can look at what a component logged (that no secret leaked, say). The zero
// value is ready to use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// WaitFor reports whether substr is written within d: for lines logged on
// another goroutine after the event the test saw (a disconnect handler runs
// after the connection already counts as disconnected).
func (l *LogBuffer) WaitFor(substr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !strings.Contains(l.String(), substr) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
