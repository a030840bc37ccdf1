package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// deviceCounts are the numbers of open pages of the devices curve
// (docs/BENCHMARKS.md, "Cost as work grows").
var deviceCounts = []int{1, 10, 100, 1000}

// devices is a web channel on a loopback HTTP server with n open event
// streams (real HTTP clients, one connection each), signed in through a
// trusted header as the four approvers in turn.
type devices struct {
	ch        *Channel
	questions atomic.Int64 // question events read by all devices
	resolved  atomic.Int64 // resolved events read by all devices
	stop      func()
}

func openDevices(b *testing.B, n int) *devices {
	b.Helper()
	ch, err := New(testConfig(b, "", "{trusted_header: X-Approver}"), Options{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, newFakeResponder()) }()
	for ch.responder() == nil {
		time.Sleep(time.Millisecond)
	}
	d := &devices{ch: ch}
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}
	var wg sync.WaitGroup
	for i := range n {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
		req.Header.Set("X-Approver", []string{"alice", "bob", "carol", "dave"}[i%4])
		res, err := tr.RoundTrip(req)
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("device %d: GET /events: %v %v", i, err, res)
		}
		wg.Go(func() { d.read(res) })
	}
	for ch.hub.count() < n {
		time.Sleep(time.Millisecond)
	}
	d.stop = func() {
		cancel()
		srv.CloseClientConnections()
		wg.Wait()
		srv.Close()
		tr.CloseIdleConnections()
		if err := <-done; err != nil {
			b.Errorf("Run: %v", err)
		}
	}
	return d
}

// read counts the events of one stream until it ends.
func (d *devices) read(res *http.Response) {
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "event: question"):
			d.questions.Add(1)
		case strings.HasPrefix(line, "event: resolved"):
			d.resolved.Add(1)
		}
	}
}

// waitFor waits until counter reaches want.
func waitFor(b *testing.B, counter *atomic.Int64, want int64) {
	deadline := time.Now().Add(30 * time.Second)
	for counter.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events after 30 s", counter.Load(), want)
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDevicesCurve fans one question out to n open pages and waits
// until the last page has read it, then does the same with the question's
// resolution (what one device's answer sends to the others, once the
// broker has settled it). ns/op is the time until the last device has
// both; question-µs and resolved-µs split it; cpu-µs/question is the
// process's CPU per question and its resolution, the devices' own reading
// included (they share the process).
func BenchmarkDevicesCurve(b *testing.B) {
	for _, n := range deviceCounts {
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			d := openDevices(b, n)
			defer d.stop()
			ctx := context.Background()
			var askTime, resolveTime time.Duration
			i := int64(0)
			cpu0 := cpuTime(b)
			for b.Loop() {
				i++
				q := question(fmt.Sprintf("req-%d", i), "make deploy")
				t0 := time.Now()
				if err := d.ch.Ask(ctx, q); err != nil {
					b.Fatal(err)
				}
				waitFor(b, &d.questions, i*int64(n))
				t1 := time.Now()
				r := messages.Resolved{V: 1, Type: "resolved", RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
					Team: q.Team, State: "approved", Decision: messages.Decision{V: 1, RequestID: q.Request.RequestID, Outcome: messages.OutcomeAllow}}
				if err := d.ch.Resolve(ctx, r); err != nil {
					b.Fatal(err)
				}
				waitFor(b, &d.resolved, i*int64(n))
				askTime += t1.Sub(t0)
				resolveTime += time.Since(t1)
			}
			cpu := cpuTime(b) - cpu0
			b.ReportMetric(float64(askTime.Microseconds())/float64(b.N), "question-µs")
			b.ReportMetric(float64(resolveTime.Microseconds())/float64(b.N), "resolved-µs")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/question")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/device")
		})
	}
}
