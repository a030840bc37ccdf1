package session

import "context"

// Expiry hands out the requests whose expiry has passed: what the reaper
// claims.
type Expiry interface {
	// ClaimExpired moves up to limit pending requests whose expiry has passed
	// (by the store's clock) to expired and returns them. Each request is
	// returned by exactly one call across every caller sharing the backend.
	ClaimExpired(ctx context.Context, limit int) ([]*Record, error)
}
