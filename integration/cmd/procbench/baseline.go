package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// baselineKey is the key the baseline reads on every request.
const baselineKey = "signoff:procbench"

// baselineReply is the size and shape of an allow receipt, so that the
// baseline's replies cost the connection what the broker's do.
const baselineReply = `{"v":1,"request_id":"%s","state":"decided","decision":{"v":1,"request_id":"x","session_id":"s-bench","tool":"bash","outcome":"allow","reason_code":"policy_allow","reason":"%s","decided_by":{"kind":"policy","id":"baseline"},"decided_at":"2026-01-01T00:00:00Z","policy_version":"baseline"}}`

// serveBaseline answers every request on the broker's request subjects (in
// the broker's queue group) with one Redis GET and a receipt-sized reply,
// until ctx ends.
func serveBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("procbench baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	natsURL := fs.String("nats", "", "NATS URL (required)")
	redisAddr := fs.String("redis", "", "Redis address host:port (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *natsURL == "" || *redisAddr == "" {
		return errors.New("-nats and -redis are required")
	}
	rdb := redis.NewClient(&redis.Options{Addr: *redisAddr})
	defer rdb.Close()
	if err := rdb.Set(ctx, baselineKey, "read by the baseline", 0).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	nc, err := nats.Connect(*natsURL, nats.Name("procbench-baseline"))
	if err != nil {
		return fmt.Errorf("connect %s: %w", *natsURL, err)
	}
	defer nc.Close()
	sub, err := nc.QueueSubscribe("signoff.v1.req.*", messages.QueueGroup, func(m *nats.Msg) {
		// One goroutine per request, as the in-process baseline
		// (internal/broker BenchmarkBrokerBaselineGET) does.
		go func() {
			v, err := rdb.Get(context.Background(), baselineKey).Result()
			if err != nil {
				v = err.Error()
			}
			_ = m.Respond(fmt.Appendf(nil, baselineReply, "baseline", v))
		}()
	})
	if err != nil {
		return err
	}
	_ = sub.SetPendingLimits(1<<20, 256<<20)
	if err := nc.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "baseline serving")
	<-ctx.Done()
	return nil
}
