package broker

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// batchOutcome is what a fast batch's done callback reported.
type batchOutcome struct {
	stored int
	err    error
}

// fastStream is a JetStream stream taking fast batches on "fb.>", and a
// publisher on its own connection.
func fastStream(t *testing.T, ackTimeout time.Duration) (jetstream.Stream, *fastPublisher) {
	t.Helper()
	ns := testenv.NATS(t)
	js, err := jetstream.New(ns.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FB", Subjects: []string{"fb.>"},
		Storage: jetstream.FileStorage, AllowBatchPublish: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.CachedInfo().Config.AllowBatchPublish {
		t.Fatal("the embedded server did not keep allow_batched")
	}
	p, err := newFastPublisher(ns.Connect(t), ackTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return s, p
}

func fbMsg(id string) *nats.Msg {
	return &nats.Msg{Subject: "fb." + id, Data: []byte(`{"id":"` + id + `"}`),
		Header: nats.Header{nats.MsgIdHdr: {id}}}
}

func publishAndWait(t *testing.T, p *fastPublisher, msgs []*nats.Msg) batchOutcome {
	t.Helper()
	got := make(chan batchOutcome, 2)
	p.publish(msgs, func(stored int, err error) { got <- batchOutcome{stored, err} })
	select {
	case o := <-got:
		if p.pending() != 0 {
			t.Errorf("pending after the batch resolved = %d, want 0", p.pending())
		}
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("the batch never resolved")
	}
	return batchOutcome{}
}

func streamMsgs(t *testing.T, s jetstream.Stream) uint64 {
	t.Helper()
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A fast batch stores every message once: the Nats-Msg-Id de-duplication
// holds inside a batch and across batches, and a duplicate counts as
// stored (the batch is acknowledged whole).
func TestFastBatchStoresEachRecordOnceAndDeduplicates(t *testing.T) {
	s, p := fastStream(t, 5*time.Second)
	var first []*nats.Msg
	for i := range 20 {
		first = append(first, fbMsg("a"+strconv.Itoa(i)))
	}
	if o := publishAndWait(t, p, first); o.stored != 20 || o.err != nil {
		t.Fatalf("first batch: stored %d, err %v; want 20, nil", o.stored, o.err)
	}
	// The retry of a batch, half of it already stored, a duplicate inside
	// it, and a duplicate first and last message.
	again := []*nats.Msg{fbMsg("a0"), fbMsg("b0"), fbMsg("a5"), fbMsg("b1"), fbMsg("b1"), fbMsg("a19")}
	if o := publishAndWait(t, p, again); o.stored != len(again) || o.err != nil {
		t.Fatalf("second batch: stored %d, err %v; want %d, nil", o.stored, o.err, len(again))
	}
	// A one-message batch is a commit at sequence 1.
	if o := publishAndWait(t, p, []*nats.Msg{fbMsg("c0")}); o.stored != 1 || o.err != nil {
		t.Fatalf("one-message batch: stored %d, err %v; want 1, nil", o.stored, o.err)
	}
	if o := publishAndWait(t, p, []*nats.Msg{fbMsg("c0")}); o.stored != 1 || o.err != nil {
		t.Fatalf("one-message duplicate: stored %d, err %v; want 1, nil", o.stored, o.err)
	}
	if n := streamMsgs(t, s); n != 23 {
		t.Fatalf("stream holds %d messages, want 23 (20 + b0, b1, c0)", n)
	}
}

// A message the stream refuses ends the batch there (gap mode fail): the
// acknowledgement counts the messages before it, and the rest are
// reported not stored, to be retried one by one.
func TestFastBatchReportsHowManyWereStoredBeforeARefusal(t *testing.T) {
	s, p := fastStream(t, 5*time.Second)
	msgs := []*nats.Msg{fbMsg("x0"), fbMsg("x1"), fbMsg("x2"), fbMsg("x3"), fbMsg("x4")}
	msgs[2].Header.Set(jetstream.ExpectedStreamHeader, "NOT-FB")
	o := publishAndWait(t, p, msgs)
	if o.stored != 2 || !errors.Is(o.err, errFastBatchGap) {
		t.Fatalf("stored %d, err %v; want 2 and a gap", o.stored, o.err)
	}
	if auditFailureKind(o.err) != "rejected" {
		t.Errorf("failure kind %q, want rejected", auditFailureKind(o.err))
	}
	if n := streamMsgs(t, s); n != 2 {
		t.Fatalf("stream holds %d messages, want 2", n)
	}
	// Refused at its first message: nothing stored.
	bad := []*nats.Msg{fbMsg("y0"), fbMsg("y1")}
	bad[0].Header.Set(jetstream.ExpectedStreamHeader, "NOT-FB")
	o = publishAndWait(t, p, bad)
	if o.stored != 0 || o.err == nil {
		t.Fatalf("refused first message: stored %d, err %v; want 0 and an error", o.stored, o.err)
	}
	if n := streamMsgs(t, s); n != 2 {
		t.Fatalf("stream holds %d messages, want 2", n)
	}
}

// A batch nobody stores fails: at once when no stream listens (no
// responders), after the ack timeout when the listener never answers.
func TestFastBatchFailsWithoutAStream(t *testing.T) {
	_, p := fastStream(t, 300*time.Millisecond)
	nostream := []*nats.Msg{{Subject: "nowhere.a", Data: []byte("{}")}, {Subject: "nowhere.a", Data: []byte("{}")}}
	o := publishAndWait(t, p, nostream)
	if o.stored != 0 || !errors.Is(o.err, nats.ErrNoResponders) || auditFailureKind(o.err) != "no_stream" {
		t.Fatalf("no stream: stored %d, err %v; want 0, no responders", o.stored, o.err)
	}
	// A subscriber that never answers, as a frozen stream leader.
	sub, err := p.nc.SubscribeSync("silent.>")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	start := time.Now()
	o = publishAndWait(t, p, []*nats.Msg{{Subject: "silent.a", Data: []byte("{}")}})
	if o.stored != 0 || auditFailureKind(o.err) != "timeout" {
		t.Fatalf("silent stream: stored %d, err %v; want 0, a timeout", o.stored, o.err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("the timeout came after %v, before the ack timeout", waited)
	}
}

func TestFastBatchID(t *testing.T) {
	for _, tc := range []struct{ subj, want string }{
		{"_INBOX.p.ID1.500.fail.3.1.$FI", "ID1"},
		{"_INBOX.p.ID1", ""},
		{"_INBOX.q.ID1.500.fail.3.1.$FI", ""},
		{"_INBOX.px.ID1.500.fail.3.1.$FI", ""},
		{"_INBOX.p", ""},
	} {
		if got := fastBatchID(tc.subj, "_INBOX.p"); got != tc.want {
			t.Errorf("fastBatchID(%q) = %q, want %q", tc.subj, got, tc.want)
		}
	}
}

// A stream recreated without allow_batched refuses batches: the records
// are retried one by one and stored once, and later records are published
// one by one without trying batches again.
func TestAuditFallsBackWhenTheStreamStopsTakingBatches(t *testing.T) {
	ns := testenv.NATS(t)
	nc := ns.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SIGNOFF_AUDIT", Subjects: []string{"signoff.v1.audit.>"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Prefix: "signoff.v1", Replica: "r1", AuditAckTimeout: 2 * time.Second, AuditRetryLimit: 100}
	m := NewMetrics(nil)
	logs := &testenv.LogBuffer{}
	a := newAuditLog(nil, &cfg, slog.New(slog.NewTextHandler(logs, nil)), m)
	if a.js, err = jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(a.failed),
		jetstream.WithPublishAsyncTimeout(cfg.AuditAckTimeout)); err != nil {
		t.Fatal(err)
	}
	// As if the stream had allowed batches at start.
	if a.fast, err = newFastPublisher(nc, cfg.AuditAckTimeout); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); a.run(runCtx) }()
	defer func() { cancel(); <-done }()

	enqueue := func(ids ...string) {
		for _, id := range ids {
			rec := a.record(&messages.Request{V: 1, RequestID: id, SessionID: "s1", AgentID: "a", Tool: "bash"},
				&messages.Decision{V: 1, RequestID: id, SessionID: "s1", Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonPolicyAllow},
				nil)
			a.enqueue(&rec)
		}
	}
	waitMsgs := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(storedRecords(t, s)) != want {
			if time.Now().After(deadline) {
				t.Fatalf("stream holds records %v, want %d; log:\n%s", storedRecords(t, s), want, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	enqueue("r1", "r2", "r3")
	waitMsgs(3)
	if !a.fastOff.Load() {
		t.Fatal("fast batches still on after the stream refused one")
	}
	if !strings.Contains(logs.String(), "no longer takes fast batches") {
		t.Errorf("no log line about the fallback:\n%s", logs.String())
	}
	failures := testutil.ToFloat64(m.AuditFailures.WithLabelValues("rejected"))
	enqueue("r4", "r5", "r1")
	waitMsgs(5)
	if got := testutil.ToFloat64(m.AuditFailures.WithLabelValues("rejected")); got != failures {
		t.Errorf("rejected failures went from %v to %v after the fallback", failures, got)
	}
	if lost := testutil.ToFloat64(m.AuditLost.WithLabelValues("overflow")); lost != 0 {
		t.Errorf("%v records lost", lost)
	}
}

// The duplicate past the window: a record appended again after the
// stream's duplicate window forgot its first copy (an outbox entry carried
// out again after a long Redis outage, a retry whose first append was
// stored but not acknowledged) is looked up first and not stored twice; a
// record that is not there is stored.
func TestALateAppendLooksTheRecordUpAndStoresItOnce(t *testing.T) {
	ns := testenv.NATS(t)
	nc := ns.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SIGNOFF_AUDIT", Subjects: []string{"signoff.v1.audit.>"},
		Duplicates: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Prefix: "signoff.v1", Replica: "r1", AuditAckTimeout: 2 * time.Second, AuditRetryLimit: 100}
	m := NewMetrics(nil)
	a := newAuditLog(nil, &cfg, slog.New(slog.DiscardHandler), m)
	if a.js, err = jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(a.failed)); err != nil {
		t.Fatal(err)
	}
	// A 500 ms window is below what configure accepts; set what it would.
	a.nc, a.apiPrefix, a.lateAfter = nc, jetstream.DefaultAPIPrefix, 300*time.Millisecond
	rec := func(id string, decided time.Time) messages.AuditRecord {
		return a.record(&messages.Request{V: 1, RequestID: id, SessionID: "s1", AgentID: "a", Tool: "bash"},
			&messages.Decision{V: 1, RequestID: id, SessionID: "s1", Outcome: messages.OutcomeDeny,
				ReasonCode: messages.ReasonPolicyDeny, DecidedAt: decided}, nil)
	}
	old := rec("q1", time.Now().Add(-time.Hour))
	for i := range 2 {
		if err := a.Append(ctx, &old); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // past the window and its purge
		if n := streamMsgs(t, s); n != 1 {
			t.Fatalf("after append %d of a late record: %d records, want 1", i+1, n)
		}
	}
	// Without the look-up the stream takes it again: the same record
	// appended twice past the window is stored twice.
	a.nc = nil
	fresh := rec("q2", time.Now().Add(-time.Hour))
	for range 2 {
		if err := a.Append(ctx, &fresh); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	if n := streamMsgs(t, s); n != 3 {
		t.Fatalf("a record appended twice past the window without look-up: %d records in all, want 3 (what the look-up prevents)", n)
	}
	a.nc = nc

	// The retry set: a record that failed long ago and is in the stream
	// by now is taken out without a second copy; one that is not, stored.
	late := rec("q3", time.Now().Add(-time.Hour))
	msg, err := a.message(&late, auditMsgID(&late))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	missing := rec("q4", time.Now().Add(-time.Hour))
	msg4, err := a.message(&missing, auditMsgID(&missing))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	a.retry[msg.Header.Get(nats.MsgIdHdr)] = &auditRetry{msg: msg, records: 1, first: time.Now().Add(-time.Hour), attempts: 1}
	a.retry[msg4.Header.Get(nats.MsgIdHdr)] = &auditRetry{msg: msg4, records: 1, first: time.Now().Add(-time.Hour), attempts: 1}
	a.retrying = 2
	if sent, failed := a.resend(0, time.Second); sent != 2 || failed != 0 {
		t.Fatalf("resend: sent %d, failed %d; want 2, 0", sent, failed)
	}
	if n := streamMsgs(t, s); n != 5 {
		t.Fatalf("after the retry pass: %d records, want 5 (q3 once, q4 stored)", n)
	}
	if a.pending() != 0 {
		t.Errorf("%d records still in the retry set", a.pending())
	}
}

// A duplicate window too short to cover the retries that rely on it is
// refused at start, naming the setting.
func TestConfigureRefusesAShortDuplicateWindow(t *testing.T) {
	ns := testenv.NATS(t)
	nc := ns.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Prefix: "signoff.v1", Replica: "r1", AuditAckTimeout: 2 * time.Second, AuditRetryLimit: 100}
	for _, tc := range []struct {
		window time.Duration
		ok     bool
	}{{30 * time.Second, false}, {36 * time.Second, false}, {37 * time.Second, true}, {2 * time.Minute, true}} {
		s, err := js.CreateOrUpdateStream(context.Background(), jetstream.StreamConfig{Name: "W", Subjects: []string{"w.>"},
			Duplicates: tc.window, AllowBatchPublish: true})
		if err != nil {
			t.Fatal(err)
		}
		a := newAuditLog(js, &cfg, slog.New(slog.DiscardHandler), NewMetrics(nil))
		err = a.configure(nc, s)
		if tc.ok != (err == nil) {
			t.Errorf("window %s: configure = %v, want ok=%v", tc.window, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--audit-dedup-window") {
			t.Errorf("window %s: %v does not name --audit-dedup-window", tc.window, err)
		}
		if err == nil && (a.fast == nil || a.lateAfter != tc.window-cfg.AuditAckTimeout-auditClockSkew) {
			t.Errorf("window %s: fast batches %v, late after %s", tc.window, a.fast != nil, a.lateAfter)
		}
		if a.fast != nil {
			a.fast.close()
		}
	}
}
