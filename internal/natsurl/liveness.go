package natsurl

import (
	"time"

	"github.com/nats-io/nats.go"
)

// Liveness returns the options that make a connection leave a NATS server
// that stopped answering (SIGSTOPped, partitioned, its host frozen) within
// about interval × (maxPingsOut + 1):
//
//   - a ping every interval, and the connection declared stale after
//     maxPingsOut unanswered ones;
//   - a write deadline of the same budget. nats.go sends its pings, and
//     flushes, under the connection's lock: once a frozen server stops
//     reading and the socket's buffers are full, a write blocks, and with
//     nats.go's default write deadline (one minute) the ping timer cannot
//     run to declare the connection stale. A busy replica fills its buffers
//     within a second, so without this the ping budget does not hold under
//     load (integration scenario "a NATS node that leads nothing
//     SIGSTOPped").
//
// A zero (or negative) interval or maxPingsOut stands for nats.go's default
// (2 min, 2); both zero keep nats.go's defaults and its one-minute write
// deadline.
func Liveness(interval time.Duration, maxPingsOut int) []nats.Option {
	if interval <= 0 && maxPingsOut <= 0 {
		return nil
	}
	if interval <= 0 {
		interval = nats.DefaultPingInterval
	}
	if maxPingsOut <= 0 {
		maxPingsOut = nats.DefaultMaxPingOut
	}
	return []nats.Option{
		nats.PingInterval(interval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.FlusherTimeout(WriteBudget(interval, maxPingsOut)),
	}
}

// WriteBudget is the write deadline [Liveness] sets: the time in which
// unanswered pings declare a connection stale.
func WriteBudget(interval time.Duration, maxPingsOut int) time.Duration {
	return interval * time.Duration(maxPingsOut+1)
}
