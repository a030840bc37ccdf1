package main

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/brokertest"
)

// TestHookSendsItsHostsTraceContextToTheBrokers runs the hook with the
// host's span in TRACEPARENT (OpenTelemetry's environment carrier) and
// checks that the request reaches the brokers with that trace in its
// traceparent header, and that a malformed value changes nothing.
func TestHookSendsItsHostsTraceContextToTheBrokers(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: hookPolicy})
	nc := p.NATS.Connect(t)
	reqs := make(chan *nats.Msg, 8)
	if _, err := nc.ChanSubscribe(p.Subjects.ReqAll(), reqs); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, tc := range []struct {
		name, traceparent, wantTrace string
	}{
		{"a host's span: the request is sent in its trace", "00-" + traceID + "-00f067aa0ba902b7-01", traceID},
		{"a malformed value: sent untraced, decided as usual", "00-nonsense", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, id := ids()
			r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id}),
				hookEnv(p, "TRACEPARENT="+tc.traceparent), "hook", "claude-code")
			if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); r.code != 0 || got != "allow" {
				t.Fatalf("exit %d, decision %v, stderr %q", r.code, got, r.stderr)
			}
			var msg *nats.Msg
			select {
			case msg = <-reqs:
			case <-time.After(5 * time.Second):
				t.Fatal("no request seen on the request subject")
			}
			got := msg.Header.Get("traceparent")
			if tc.wantTrace == "" {
				if got != "" {
					t.Fatalf("traceparent %q sent for a malformed TRACEPARENT", got)
				}
				return
			}
			if parts := strings.Split(got, "-"); len(parts) != 4 || parts[1] != tc.wantTrace {
				t.Fatalf("traceparent header %q, want one in trace %s", got, tc.wantTrace)
			}
		})
	}
}
