package session

import (
	"context"
	"time"
)

// Backend is the store's clock, health check and lifetime.
type Backend interface {
	// Now returns the store's clock (Redis TIME for the Redis store).
	Now(ctx context.Context) (time.Time, error)

	// Ping checks that the backend answers.
	Ping(ctx context.Context) error

	// Close releases the store's resources. It is idempotent.
	Close() error
}
