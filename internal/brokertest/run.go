package brokertest

import (
	"context"
	"testing"
	"time"
)

// Run runs run in the background until the test ends: at cleanup it cancels
// run's context and waits up to 10 s for it to return, failing the test when
// it returns an error or does not stop. Cleanups registered before Run run
// after run has stopped.
func Run(t testing.TB, what string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop within 10 s of its context ending", what)
		}
	})
}
