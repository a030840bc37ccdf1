package redisstore_test

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

// suiteRetention is the short retention the conformance suite runs with.
const suiteRetention = time.Second

// suiteEffectLease is the short outbox lease it runs with.
const suiteEffectLease = 200 * time.Millisecond

func suiteOptions(url string) redisstore.Options {
	o := options(url, suiteRetention)
	o.EffectLease = suiteEffectLease
	return o
}

func TestConformance(t *testing.T) {
	srv := testenv.Redis(t)
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) session.Store {
			return newStore(t, suiteOptions(srv.URL()))
		},
		Retention:   suiteRetention,
		EffectLease: suiteEffectLease,
	})
}

// TestConformanceOnRedisCluster runs the suite against a one-node Redis
// Cluster through a cluster client. Redis Cluster refuses a script that
// touches keys of two hash slots, so this run proves that every script
// keeps to one slot, and that the pipelines that span slots (Prepare,
// Lookup, ClaimExpired) work through the cluster client.
func TestConformanceOnRedisCluster(t *testing.T) {
	srv := testenv.Redis(t, testenv.WithCluster())
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) session.Store {
			return newStore(t, suiteOptions("redis+cluster://"+srv.Addr()))
		},
		Retention:   suiteRetention,
		EffectLease: suiteEffectLease,
	})
}
