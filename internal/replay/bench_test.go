package replay

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// benchRecords is the size of the benchmarks' audit stream: the issue's
// bound is 100k decisions replayed in under 10 s.
const benchRecords = 100_000

// benchCalls are the recorded calls, in rotation: shell commands (the
// costly analysis), file tools, an MCP tool.
var benchCalls = []struct {
	tool string
	args string
	code messages.ReasonCode
}{
	{"bash", `{"command":"ls -la src"}`, messages.ReasonPolicyAllow},
	{"bash", `{"command":"git status && git diff --stat | head -n 20"}`, messages.ReasonApproved},
	{"bash", `{"command":"npm run build > build.log 2>&1"}`, messages.ReasonScopeGrant},
	{"bash", `{"command":"rm -rf /tmp/cache"}`, messages.ReasonPolicyDeny},
	{"bash", `{"command":"find . -name '*.go' -exec grep -l TODO {} +"}`, messages.ReasonRejected},
	{"read_file", `{"path":"/work/app/.env"}`, messages.ReasonPolicyDeny},
	{"write_file", `{"path":"/work/app/README.md","content":"hello"}`, messages.ReasonModeAllow},
	{"mcp__github__create_issue", `{"title":"x"}`, messages.ReasonApproved},
}

const benchCandidate = `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: deny }
  - { rule: "bash(git *)", action: allow }
  - { rule: "bash(rm -rf /*)", action: deny }
  - { rule: "read_file(**/.env)", action: deny }
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
teams:
  default: { members: [alice] }
  oncall:  { members: [carol] }
`

// benchRecord is the encoded audit record number i.
func benchRecord(i int) []byte {
	c := benchCalls[i%len(benchCalls)]
	id := fmt.Sprintf("r-%06d", i)
	sess := fmt.Sprintf("s-%04d", i%1000)
	outcome, _ := c.code.Outcome()
	at := time.Now().Add(-time.Hour).Add(time.Duration(i) * time.Millisecond).UTC()
	rec := messages.AuditRecord{V: 1,
		Request: messages.Request{V: 1, RequestID: id, SessionID: sess, AgentID: "agent-" + sess, Tool: c.tool,
			Arguments: json.RawMessage(c.args), Cwd: "/work/app"},
		Decision: messages.Decision{V: 1, RequestID: id, SessionID: sess, Tool: c.tool, Outcome: outcome, ReasonCode: c.code,
			DecidedBy: messages.Decider{Kind: messages.DeciderPolicy, ID: "g-1"}, DecidedAt: at, PolicyVersion: "sha256:live",
			GrantedPattern: grantPatterns(c.code)},
		Replica: "replica-0", Recorded: at}
	data, err := rec.AppendJSON(nil)
	if err != nil {
		panic(err)
	}
	return data
}

func grantPatterns(code messages.ReasonCode) []string {
	if code == messages.ReasonScopeGrant {
		return []string{"npm run build"}
	}
	return nil
}

func benchPolicy(b *testing.B) *policy.Policy {
	cand, err := policy.Parse([]byte(benchCandidate), "candidate.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return cand
}

// BenchmarkReplayJudge100k judges 100k recorded decisions held in memory:
// decoding and policy evaluation, without reading the stream.
func BenchmarkReplayJudge100k(b *testing.B) {
	cand := benchPolicy(b)
	recs := make([][]byte, benchRecords)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		rep, err := Records(b.Context(), cand, time.Time{}, func(yield func([]byte)) error {
			for _, r := range recs {
				yield(r)
			}
			return nil
		})
		if err != nil || rep.Replayed != benchRecords {
			b.Fatalf("replayed %d of %d: %v", rep.Replayed, benchRecords, err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkReplayStream100k replays 100k recorded decisions from the
// SIGNOFF_AUDIT stream of an embedded NATS server: what `signoff admin
// replay` does, minus printing. One op is one whole replay.
func BenchmarkReplayStream100k(b *testing.B) {
	srv := testenv.NATS(b)
	nc := srv.Connect(b)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	subj, _ := messages.NewSubjects("")
	if _, err := js.CreateStream(b.Context(), jetstream.StreamConfig{Name: messages.AuditStream, Subjects: []string{subj.AuditAll()}}); err != nil {
		b.Fatal(err)
	}
	for i := range benchRecords {
		if _, err := js.PublishAsync(subj.Audit(fmt.Sprintf("s-%04d", i%1000)), benchRecord(i)); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 || i == benchRecords-1 {
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				b.Fatal("publishing the records stalled for a minute")
			}
		}
	}
	cand := benchPolicy(b)
	since := time.Now().Add(-24 * time.Hour)
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		rep, err := Records(b.Context(), cand, since, func(yield func([]byte)) error {
			return readAudit(b.Context(), nc, []string{subj.AuditAll()}, since, yield)
		})
		if err != nil || rep.Replayed != benchRecords {
			b.Fatalf("replayed %d of %d: %v", rep.Replayed, benchRecords, err)
		}
	}
	reportCPU(b, cpu)
}

// cpuTime is the CPU time (user and system) this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU seconds the process used per op since start:
// on a shared machine the wall time (ns/op) counts the waits for a core,
// this does not (the test process's embedded NATS server included).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkShadowCost compares what a shadow policy adds to a request
// (JudgeShadow: the candidate's evaluation and the comparison with the
// live decision) with the live policy evaluation it duplicates, on the
// same automatically allowed shell call. The two are timed in turns
// within each iteration (their order alternating), so that the load of a
// shared machine weighs on both alike; it reports their ratio
// (shadow/evaluate; the bound is 1.1) and each one's ns.
func BenchmarkShadowCost(b *testing.B) {
	live := benchPolicy(b)
	cand := benchPolicy(b)
	req := messages.Request{V: 1, RequestID: "r-1", SessionID: "s-1", AgentID: "a-1", Tool: "bash",
		Arguments: json.RawMessage(`{"command":"git status && git diff --stat"}`), Cwd: "/work/app"}
	dec := messages.Decision{V: 1, RequestID: "r-1", SessionID: "s-1", Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonPolicyAllow}
	evaluate := func() {
		if d := live.Evaluate(policy.Call{Tool: "bash", Arguments: req.Arguments, Cwd: req.Cwd}); d.Action != policy.Allow {
			b.Fatal(d.Action)
		}
	}
	shadow := func() {
		if v := JudgeShadow(cand, &req, &dec, ""); v == nil || v.Action != "allow" {
			b.Fatal(v)
		}
	}
	var evalT, shadowT time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if i%2 == 0 {
			evaluate()
			t1 := time.Now()
			shadow()
			evalT, shadowT = evalT+t1.Sub(t0), shadowT+time.Since(t1)
		} else {
			shadow()
			t1 := time.Now()
			evaluate()
			shadowT, evalT = shadowT+t1.Sub(t0), evalT+time.Since(t1)
		}
		i++
	}
	b.ReportMetric(float64(shadowT)/float64(evalT), "shadow/evaluate")
	b.ReportMetric(float64(evalT.Nanoseconds())/float64(b.N), "evaluate-ns")
	b.ReportMetric(float64(shadowT.Nanoseconds())/float64(b.N), "shadow-ns")
}
