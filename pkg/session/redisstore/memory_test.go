package redisstore_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// memoryPendingEnv sets how many pending requests TestMemoryPerPendingRequest
// stores (default 10,000; docs/BENCHMARKS.md reports 100,000).
const memoryPendingEnv = "SIGNOFF_MEMORY_PENDING"

// TestMemoryPerPendingRequest measures the Redis memory a pending request
// costs with everything that indexes it (record, session expiry index,
// agent and team indexes, due index), as the growth of INFO used_memory
// divided by the number of requests, and checks DESIGN §6's bound of
// 1 KiB. With SIGNOFF_MEMORY_PENDING set it also reports the figures
// without payload compression and with one request per session.
func TestMemoryPerPendingRequest(t *testing.T) {
	n, report := 10_000, false
	if v := os.Getenv(memoryPendingEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("%s=%q: want a number of at least 1000", memoryPendingEnv, v)
		}
		report = true
	}
	type shape struct {
		name        string
		compressMin int // -1: the store's default
		perSession  int
		check       bool
		twoStep     bool // Prepare + Open, outbox entries not acknowledged
	}
	cases := []shape{
		{"zstd payloads, 10 requests per session", -1, 10, true, false},
		// The broker's own writes, with every Open's outbox entry still
		// there: the worst case, when no replica acknowledged them.
		{"zstd payloads, 10 requests per session, two-step create, outbox entries unacknowledged", -1, 10, true, true},
	}
	if report {
		// For docs/BENCHMARKS.md: what compression saves, and the worst
		// case of one request per session (each pays for its session's
		// expiry index and due-index member alone).
		cases = append(cases,
			shape{"raw payloads, 10 requests per session", math.MaxInt, 10, false, false},
			shape{"zstd payloads, 1 request per session", -1, 1, false, false},
			shape{"zstd payloads, 1 request per session, two-step create, outbox entries unacknowledged", -1, 1, false, true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.compressMin >= 0 {
				defer redisstore.SetCompressMin(tc.compressMin)()
			}
			srv := testenv.Redis(t)
			admin := srv.Client()
			s := newStore(t, redisOptionsForBulk(srv.URL()))
			ctx := context.Background()
			before := usedMemory(t, admin)
			w := newWorkload(tc.perSession)
			recs := storeMany(t, s, w, n, time.Hour, tc.twoStep)
			// The store's connections hold query buffers: close them so that
			// used_memory counts the data only.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			after := usedMemory(t, admin)
			perRequest := float64(after-before) / float64(n)

			usage := func(pattern string) int64 {
				var sum int64
				iter := admin.Scan(ctx, 0, pattern, 1000).Iterator()
				for iter.Next(ctx) {
					n, err := admin.MemoryUsage(ctx, iter.Val(), 0).Result()
					if err != nil {
						t.Fatal(err)
					}
					sum += n
				}
				if err := iter.Err(); err != nil {
					t.Fatal(err)
				}
				return sum
			}
			payload := 0
			for _, r := range recs {
				js, err := json.Marshal(&r.Question)
				if err != nil {
					t.Fatal(err)
				}
				payload += len(js)
			}
			t.Logf("%d pending requests in %d sessions, payload %d bytes of JSON on average", n, len(w.sessions), payload/n)
			t.Logf("used_memory grew %.0f bytes per request; MEMORY USAGE per request: records %d, session expiry indexes %d, agent indexes %d, team indexes %d, due index %d, outboxes %d, outbox index %d",
				perRequest, usage("signoff:{*}:r:*")/int64(n), usage("signoff:{*}:exp")/int64(n),
				usage("signoff:agent:*")/int64(n), usage("signoff:team:*")/int64(n), usage("signoff:due:*")/int64(n),
				usage("signoff:{*}:ob")/int64(n), usage("signoff:obx:*")/int64(n))
			if tc.check && perRequest >= 1024 {
				t.Errorf("a pending request costs %.0f bytes of Redis memory, want under 1 KiB", perRequest)
			}
		})
	}
}

func usedMemory(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO memory has no used_memory: %q", info)
	return 0
}
