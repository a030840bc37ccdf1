package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	sdktracetest "go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The broker benchmarks run the decision path through NATS and a real Redis
// and compare it with a baseline responder on the same NATS server that does
// one Redis GET per request and replies: the least any replica that reads
// shared state could do. See docs/BENCHMARKS.md.
//
// Each runs twice: serial (one request at a time: latency without queueing)
// and parallel (16 requests in flight: throughput).
//
//	go test -run='^$' -bench=Broker -benchtime=5000x -count=5 ./internal/broker/

// benchLatencies runs op from `workers` goroutines until b.N calls are done
// and reports p50/p99 latency and throughput.
func benchLatencies(b *testing.B, workers int, op func(i int) error) {
	b.Helper()
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	var failed atomic.Int64
	b.ResetTimer()
	cpu0 := processCPU()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					if failed.Add(1) == 1 {
						b.Error(err)
					}
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	// CPU time of this process (agents, NATS server, broker or baseline;
	// not redis-server) per request: steadier than throughput on a shared
	// machine, and it says where the difference comes from.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchModes are the two load shapes every broker benchmark runs under.
var benchModes = []struct {
	name    string
	workers int
}{{"serial", 1}, {"parallel", 16}}

func BenchmarkBrokerBaselineGET(b *testing.B) {
	p := brokertest.Start(b, brokertest.Options{NoBroker: true, Redis: true})
	rdb := redis.NewClient(&redis.Options{Addr: p.Redis.Addr()})
	defer rdb.Close()
	rdb.Set(context.Background(), "signoff:bench", "x", 0)
	nc := p.NATS.Connect(b)
	_, err := nc.QueueSubscribe(p.Subjects.ReqAll(), messages.QueueGroup, func(m *nats.Msg) {
		go func() {
			v, err := rdb.Get(context.Background(), "signoff:bench").Result()
			if err != nil {
				v = err.Error()
			}
			_ = m.Respond([]byte(`{"v":1,"state":"decided","value":"` + v + `"}`))
		}()
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = nc.Flush()
	agent := p.NATS.Connect(b)
	body := benchRequest("x", "ls -la")
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			benchLatencies(b, m.workers, func(int) error {
				_, err := agent.Request(p.Subjects.Req("s-bench"), body, 5*time.Second)
				return err
			})
		})
	}
}

func BenchmarkBrokerAutoAllow(b *testing.B) {
	benchAuto(b, "ls -la", messages.OutcomeAllow, brokertest.Options{})
}

func BenchmarkBrokerAutoDeny(b *testing.B) {
	benchAuto(b, "rm -rf /etc", messages.OutcomeDeny, brokertest.Options{})
}

// BenchmarkBrokerAutoAllowTraced is BenchmarkBrokerAutoAllow with tracing
// on: every request sampled, its spans (request, policy, store lookup,
// reply) batched by the OpenTelemetry SDK and handed to an exporter that
// drops them. Beside BenchmarkBrokerAutoAllow it is what tracing costs the
// automatic path, less the network of a real export (docs/BENCHMARKS.md).
func BenchmarkBrokerAutoAllowTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(sdktracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	benchAuto(b, "ls -la", messages.OutcomeAllow, brokertest.Options{Tracer: tp.Tracer("bench")})
}

// BenchmarkBrokerAutoAllowNoAudit shows what the JetStream audit append
// costs the decision path (docs/BENCHMARKS.md).
func BenchmarkBrokerAutoAllowNoAudit(b *testing.B) {
	benchAuto(b, "ls -la", messages.OutcomeAllow, brokertest.Options{DisableAudit: true})
}

// BenchmarkBrokerAutoAllowUncoalesced shows what coalescing concurrent
// Redis reads (redisstore Options.ReadRoundTrips) gains under load: every
// Lookup has a round trip of its own.
func BenchmarkBrokerAutoAllowUncoalesced(b *testing.B) {
	benchAuto(b, "ls -la", messages.OutcomeAllow, brokertest.Options{ReadRoundTrips: math.MaxInt})
}

func benchAuto(b *testing.B, cmd string, want messages.Outcome, o brokertest.Options) {
	o.Replicas, o.Redis = 1, true
	p := brokertest.Start(b, o)
	agent := p.NATS.Connect(b)
	outcome := []byte(`"outcome":"` + string(want) + `"`)
	subject := p.Subjects.Req("s-bench")
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			// Bodies are built before the clock starts: the baseline's
			// agent sends one fixed body and encodes nothing.
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = benchRequest(fmt.Sprintf("%s-r%d", m.name, i), cmd)
			}
			var last atomic.Pointer[[]byte]
			defer func() {
				var rc messages.Receipt
				if data := last.Load(); data == nil || json.Unmarshal(*data, &rc) != nil || rc.Decision == nil || rc.Decision.Outcome != want {
					b.Errorf("last receipt is not a decided %s", want)
				}
			}()
			benchLatencies(b, m.workers, func(i int) error {
				msg, err := agent.Request(subject, bodies[i], 5*time.Second)
				if err != nil {
					return err
				}
				// A byte search, not a decode: the baseline's agent decodes
				// nothing either, and both share the machine's two cores.
				// The full receipt is checked once, after the run.
				if !bytes.Contains(msg.Data, outcome) {
					return fmt.Errorf("receipt %s", msg.Data)
				}
				last.Store(&msg.Data)
				return nil
			})
		})
	}
}

// BenchmarkBrokerAskPath measures the two human-facing legs of an ask: from
// the agent's request to the question reaching an approver subscriber, and
// from the approver's response to the decision reaching the agent.
func BenchmarkBrokerAskPath(b *testing.B) { benchAskPath(b, nil) }

// BenchmarkBrokerAskPathEdited is BenchmarkBrokerAskPath with approvals
// that change the call: the response leg also judges the edited call with
// the policy (docs/PROTOCOL.md "Approve with changes").
func BenchmarkBrokerAskPathEdited(b *testing.B) {
	benchAskPath(b, json.RawMessage(`{"command":"make deploy ENV=staging"}`))
}

// benchAskPath runs the ask path; every approval carries edit when it is
// set.
func benchAskPath(b *testing.B, edit json.RawMessage) {
	p := brokertest.Start(b, brokertest.Options{Replicas: 1, Redis: true})
	agent := p.NATS.Connect(b)
	approverNC := p.NATS.Connect(b)
	questions, err := approverNC.SubscribeSync(p.Subjects.Ask("default"))
	if err != nil {
		b.Fatal(err)
	}
	_ = approverNC.Flush()
	toQuestion := make([]time.Duration, 0, b.N)
	toDecision := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("ask%d", i)
		decisions, _ := agent.SubscribeSync(p.Subjects.Decision("s-bench", id))
		t0 := time.Now()
		if _, err := agent.Request(p.Subjects.Req("s-bench"), benchRequest(id, "make deploy"), 5*time.Second); err != nil {
			b.Fatal(err)
		}
		m, err := questions.NextMsg(5 * time.Second)
		if err != nil {
			b.Fatal(err)
		}
		toQuestion = append(toQuestion, time.Since(t0))
		var q messages.ApprovalNeeded
		if err := json.Unmarshal(m.Data, &q); err != nil {
			b.Fatal(err)
		}
		resp, _ := json.Marshal(messages.Response{V: 1, RequestID: id, SessionID: "s-bench", Approver: messages.Approver{ID: "alice"}, Approved: true,
			UpdatedArguments: edit, Digest: q.Digest})
		t1 := time.Now()
		if err := approverNC.PublishRequest(p.Subjects.Respond(), nats.NewInbox(), resp); err != nil {
			b.Fatal(err)
		}
		if _, err := decisions.NextMsg(5 * time.Second); err != nil {
			b.Fatal(err)
		}
		toDecision = append(toDecision, time.Since(t1))
		_ = decisions.Unsubscribe()
	}
	b.StopTimer()
	slices.Sort(toQuestion)
	slices.Sort(toDecision)
	b.ReportMetric(float64(toQuestion[len(toQuestion)/2].Microseconds()), "ask-p50-µs")
	b.ReportMetric(float64(toQuestion[len(toQuestion)*99/100].Microseconds()), "ask-p99-µs")
	b.ReportMetric(float64(toDecision[len(toDecision)/2].Microseconds()), "decide-p50-µs")
	b.ReportMetric(float64(toDecision[len(toDecision)*99/100].Microseconds()), "decide-p99-µs")
}

func benchRequest(id, cmd string) []byte {
	data, _ := json.Marshal(messages.Request{V: 1, RequestID: id, SessionID: "s-bench", AgentID: "pod-1", Tool: "bash",
		Arguments: json.RawMessage(fmt.Sprintf(`{"command":%q}`, cmd))})
	return data
}
