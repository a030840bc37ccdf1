package memstore_test

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

func TestConformance(t *testing.T) {
	const retention, effectLease = time.Second, 200 * time.Millisecond
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) session.Store {
			return memstore.New(memstore.Options{Retention: retention, EffectLease: effectLease})
		},
		Retention:   retention,
		EffectLease: effectLease,
	})
}
