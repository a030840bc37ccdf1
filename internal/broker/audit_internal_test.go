package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Every kind auditFailureKind returns is initialised at 0 by NewMetrics
// (its values are computed, so TestEveryLabelValueInCodeIsInitialised
// cannot see them), and each error lands in the kind the docs name.
func TestAuditFailureKindsAreInitialisedAndClassified(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{jetstream.ErrAsyncPublishTimeout, "timeout"},
		{fmt.Errorf("append: %w", context.DeadlineExceeded), "timeout"},
		{nats.ErrTimeout, "timeout"},
		{jetstream.ErrNoStreamResponse, "no_stream"},
		{nats.ErrNoResponders, "no_stream"},
		{jetstream.ErrTooManyStalledMsgs, "stalled"},
		{nats.ErrDisconnected, "disconnected"},
		{nats.ErrConnectionClosed, "disconnected"},
		{&jetstream.APIError{Code: 503, Description: "insufficient resources"}, "rejected"},
		{errors.New("something else"), "other"},
	} {
		got := auditFailureKind(tc.err)
		if got != tc.want {
			t.Errorf("auditFailureKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
		if !slices.Contains(auditFailureKinds, got) {
			t.Errorf("kind %q is not initialised by NewMetrics", got)
		}
	}
}
