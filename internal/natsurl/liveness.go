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
//   - a write deadline of one interval, and a reconnect when the flusher's
//     write fails. nats.go sends its pings, and flushes, under the
//     connection's lock: once a frozen server stops reading and the
//     socket's buffers are full, a write blocks, and with nats.go's
//     defaults (a one-minute deadline, a failed flush only remembered) the
//     ping timer cannot run to declare the connection stale, nor does the
//     failed write end it. A busy replica fills its buffers within a
//     second, so without these the ping budget does not hold under load
//     (integration scenario "a NATS node that leads nothing SIGSTOPped").
//     A healthy server drains megabytes of socket buffer well within an
//     interval.
//
// A zero (or negative) interval or maxPingsOut stands for nats.go's default
// (2 min, 2); both zero keep nats.go's defaults.
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
		nats.FlusherTimeout(interval),
		nats.ReconnectOnFlusherError(),
	}
}
