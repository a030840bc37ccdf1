package session

import (
	"context"
	"strconv"
	"time"
)

// Outbox hands out the effects that the caller of a transition did not
// acknowledge within its lease, and acknowledges effects carried out; the
// rules are at [DefaultEffectLease].
type Outbox interface {
	// ClaimEffects leases up to limit outbox entries whose lease has run out
	// and returns the records they name, as they stand now; see the outbox
	// rules at [DefaultEffectLease]. Each entry is returned to one caller per
	// lease: if that caller does not acknowledge it (AckEffects) before the
	// lease ends, a later call returns it again.
	ClaimEffects(ctx context.Context, limit int) ([]*Record, error)

	// AckEffects removes the outbox entries of recs (records returned by a
	// transition or by ClaimEffects) once their effects are carried out. An
	// entry that a later transition of the same request replaced stays:
	// its effects are still owed.
	AckEffects(ctx context.Context, recs ...*Record) error
}

// DefaultEffectLease is how long the caller of a transition alone may carry out
// the effects it recorded in the outbox (by default; stores make it
// configurable).
//
// The outbox rules every Store keeps (the conformance suite in storetest
// checks them):
//
//   - Every transition that changes a request in a way the world outside
//     the store must hear about records, in the same atomic step, an outbox
//     entry for that request: Open (the question must be asked), an applied
//     Decide (a counted approval must be shown; a settled request's
//     decision published, its grants stored, its cascade or its stop's
//     rejections run), an applied Settle, each request Stop or
//     CancelSession settles, and each request ClaimExpired expires.
//   - The entry names the request, not the effects: they follow from the
//     record as it stands. A later transition of the same request replaces
//     its entry.
//   - The caller of the transition holds the entry's lease (DefaultEffectLease by default):
//     it carries the effects out at once and acknowledges them with
//     AckEffects. If it dies or fails first, the lease runs out and
//     ClaimEffects hands the entry to another caller (again, each time a
//     lease runs out, until one acknowledges it). Effects are therefore
//     carried out at least once, and must be idempotent.
//   - An entry whose record is gone (past its retention) is dropped.
const DefaultEffectLease = 5 * time.Second

// EffectMark names the transition that left r as it is: its state, its
// decision time (µs; empty while pending) and its number of approvals.
// Every transition of a request changes one of them, so a store tells an
// outbox entry of an older transition from a newer one's by it (the Redis
// scripts build the same string).
func EffectMark(r *Record) string {
	decided := ""
	if !r.DecidedAt.IsZero() {
		decided = strconv.FormatInt(r.DecidedAt.UnixMicro(), 10)
	}
	return string(r.State) + ":" + decided + ":" + strconv.Itoa(len(r.Approvals))
}
