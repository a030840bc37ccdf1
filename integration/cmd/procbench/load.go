package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// loadResult is one load run, printed by the load role as one JSON line.
type loadResult struct {
	Requests    int     `json:"requests"`
	Concurrency int     `json:"concurrency"`
	P50Micros   float64 `json:"p50_us"`
	P99Micros   float64 `json:"p99_us"`
	PerSecond   float64 `json:"req_per_s"`
	Errors      int64   `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
}

// loadConfig is the load role's command line.
type loadConfig struct {
	natsURL     string
	session     string
	sessions    int
	command     string
	want        string
	requests    int
	warmup      int
	concurrency int
	conns       int
	timeout     time.Duration
}

func parseLoad(args []string, stderr io.Writer) (loadConfig, error) {
	var c loadConfig
	fs := flag.NewFlagSet("procbench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.natsURL, "nats", "", "NATS URL of the plane to load (required)")
	fs.StringVar(&c.session, "session", "s-bench", "session id of the requests")
	fs.IntVar(&c.sessions, "sessions", 1, "sessions the requests are spread over, one after the other (SESSION-0, SESSION-1…; 1: SESSION alone)")
	fs.StringVar(&c.command, "command", "ls -la", "bash command every request asks to run")
	fs.StringVar(&c.want, "want", `"outcome":"allow"`, "bytes every reply must contain")
	fs.IntVar(&c.requests, "requests", 5000, "requests measured")
	fs.IntVar(&c.warmup, "warmup", 500, "requests sent (once the target answers) before measuring")
	fs.IntVar(&c.concurrency, "concurrency", 1, "requests in flight")
	fs.IntVar(&c.conns, "conns", 0, "NATS connections the requests are spread over (0: one per request in flight, as agents each have their own)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "bound on each request")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.natsURL == "":
		return c, errors.New("-nats is required")
	case c.requests < 1 || c.concurrency < 1 || c.sessions < 1 || c.warmup < 0 || c.conns < 0:
		return c, errors.New("-requests, -concurrency and -sessions must be at least 1, -warmup and -conns not negative")
	}
	if c.conns == 0 || c.conns > c.concurrency {
		c.conns = c.concurrency
	}
	return c, nil
}

// loadReq is a request built before the clock starts: its subject and body.
type loadReq struct {
	subject string
	body    []byte
}

// bodies are requests built before the clock starts, each with its own id,
// the sessions taking turns.
func bodies(c *loadConfig, n int) []loadReq {
	args, _ := json.Marshal(map[string]string{"command": c.command})
	out := make([]loadReq, n)
	for i := range out {
		session := c.session
		if c.sessions > 1 {
			session += "-" + strconv.Itoa(i%c.sessions)
		}
		out[i].subject = "signoff.v1.req." + session
		out[i].body, _ = json.Marshal(messages.Request{V: messages.Version, RequestID: nuid.Next(), SessionID: session,
			AgentID: "procbench", Tool: "bash", Arguments: args})
	}
	return out
}

// runLoad waits until the target answers, warms it up, then sends
// c.requests requests from c.concurrency goroutines spread over c.conns
// connections and measures each from send to reply.
func runLoad(ctx context.Context, c loadConfig) (loadResult, error) {
	if c.conns < 1 {
		c.conns = 1
	}
	conns := make([]*nats.Conn, c.conns)
	for i := range conns {
		nc, err := nats.Connect(c.natsURL, nats.Name("procbench-load"))
		if err != nil {
			return loadResult{}, fmt.Errorf("connect %s: %w", c.natsURL, err)
		}
		defer nc.Close()
		conns[i] = nc
	}
	probe := bodies(&c, 1)[0]
	for {
		_, err := conns[0].RequestWithContext(ctx, probe.subject, probe.body)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return loadResult{}, fmt.Errorf("target never answered: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c.warmup > 0 {
		if _, err := measure(ctx, conns, bodies(&c, c.warmup), c); err != nil {
			return loadResult{}, err
		}
	}
	return measure(ctx, conns, bodies(&c, c.requests), c)
}

func measure(ctx context.Context, conns []*nats.Conn, reqs []loadReq, c loadConfig) (loadResult, error) {
	want := []byte(c.want)
	lat := make([]time.Duration, len(reqs))
	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c.concurrency {
		nc := conns[w%len(conns)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(reqs) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				rep, err := nc.Request(reqs[i].subject, reqs[i].body, c.timeout)
				lat[i] = time.Since(t0)
				if err == nil && !bytes.Contains(rep.Data, want) {
					err = fmt.Errorf("reply %.200s does not contain %s", rep.Data, want)
				}
				if err != nil && failed.Add(1) == 1 {
					firstErr.Store(err.Error())
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return loadResult{}, err
	}
	slices.Sort(lat)
	r := loadResult{
		Requests:    len(reqs),
		Concurrency: c.concurrency,
		P50Micros:   float64(lat[len(lat)/2].Nanoseconds()) / 1e3,
		P99Micros:   float64(lat[len(lat)*99/100].Nanoseconds()) / 1e3,
		PerSecond:   float64(len(reqs)) / elapsed.Seconds(),
		Errors:      failed.Load(),
	}
	if s, ok := firstErr.Load().(string); ok {
		r.FirstError = s
	}
	return r, nil
}
