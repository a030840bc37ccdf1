package natstrace_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/pkg/natstrace"
)

func spanCtx(t *testing.T) context.Context {
	t.Helper()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

func TestInjectWritesALowerCaseTraceparentThatExtractReadsBack(t *testing.T) {
	ctx := spanCtx(t)
	msg := nats.NewMsg("signoff.v1.req.s1")
	natstrace.Inject(ctx, msg)
	want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if got := msg.Header.Get("traceparent"); got != want {
		t.Fatalf("traceparent header = %q, want %q (headers %v)", got, want, msg.Header)
	}
	got := trace.SpanContextFromContext(natstrace.Extract(context.Background(), msg.Header))
	if got.TraceID() != trace.SpanContextFromContext(ctx).TraceID() || !got.IsRemote() {
		t.Fatalf("extracted %v, want the injected trace marked remote", got)
	}
}

func TestInjectAddsNoHeaderWithoutASpan(t *testing.T) {
	msg := nats.NewMsg("signoff.v1.req.s1")
	natstrace.Inject(context.Background(), msg)
	if len(msg.Header) != 0 {
		t.Fatalf("an untraced message got headers %v", msg.Header)
	}
	if natstrace.Format(context.Background()) != "" {
		t.Fatal("Format of an untraced context is not empty")
	}
}

func TestExtractReadsTheHeaderInAnyCase(t *testing.T) {
	for _, name := range []string{"traceparent", "Traceparent", "TRACEPARENT"} {
		h := nats.Header{name: {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
		if !trace.SpanContextFromContext(natstrace.Extract(context.Background(), h)).IsValid() {
			t.Errorf("header %q was not read", name)
		}
	}
}

func TestMalformedTraceparentLeavesTheContextUntraced(t *testing.T) {
	for _, v := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-zz-01"} {
		if trace.SpanContextFromContext(natstrace.Parse(context.Background(), v)).IsValid() {
			t.Errorf("traceparent %q gave a valid span context", v)
		}
	}
}

func TestFormatAndParseRoundTrip(t *testing.T) {
	ctx := spanCtx(t)
	back := trace.SpanContextFromContext(natstrace.Parse(context.Background(), natstrace.Format(ctx)))
	want := trace.SpanContextFromContext(ctx)
	if back.TraceID() != want.TraceID() || back.SpanID() != want.SpanID() || !back.IsSampled() {
		t.Fatalf("round trip gave %v, want %v", back, want)
	}
}

func TestSetReplacesOtherSpellings(t *testing.T) {
	c := natstrace.Carrier{"Traceparent": {"old"}}
	c.Set("traceparent", "new")
	if len(c) != 1 || c.Get("TRACEPARENT") != "new" {
		t.Fatalf("carrier after Set = %v", c)
	}
}
