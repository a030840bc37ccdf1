package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// ErrNoAuditStream is returned when the plane keeps no audit stream (its
// brokers run with the audit disabled): there is nothing to replay.
var ErrNoAuditStream = errors.New("the plane has no audit stream " + messages.AuditStream + " (brokers run with the audit disabled?)")

// readBatch is how many records the server sends ahead of the reader.
const readBatch = 1024

// readAudit calls yield with the data of every message of the audit stream
// on subjects (see [Tenants.Subjects]) stored at or after since, oldest first, and up
// to the last one stored when it started (records appended meanwhile are
// the next replay's). It reads through an ephemeral consumer without
// acknowledgements, which it deletes when done.
func readAudit(ctx context.Context, nc *nats.Conn, subjects []string, since time.Time, yield func([]byte)) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, messages.AuditStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return ErrNoAuditStream
	}
	if err != nil {
		return fmt.Errorf("audit stream %s: %w", messages.AuditStream, err)
	}
	cons, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubjects:    subjects,
		DeliverPolicy:     jetstream.DeliverByStartTimePolicy,
		OptStartTime:      &since,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		InactiveThreshold: time.Minute, // the server drops it if this process dies
	})
	if err != nil {
		return fmt.Errorf("read audit stream %s: %w", messages.AuditStream, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_ = s.DeleteConsumer(dctx, cons.CachedInfo().Name)
		cancel()
	}()
	left := cons.CachedInfo().NumPending
	if left == 0 {
		return nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(readBatch))
	if err != nil {
		return fmt.Errorf("read audit stream %s: %w", messages.AuditStream, err)
	}
	defer it.Stop()
	for ; left > 0; left-- {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return fmt.Errorf("read audit stream %s (%d records left): %w", messages.AuditStream, left, err)
		}
		yield(m.Data())
	}
	return nil
}
