package broker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// batchedAudit is an audit log on a real stream that takes fast batches,
// configured as Run configures it.
func batchedAudit(t *testing.T, limit int) (*auditLog, jetstream.Stream) {
	t.Helper()
	ns := testenv.NATS(t)
	nc := ns.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: messages.AuditStream, Subjects: []string{"signoff.v1.audit.>"},
		Storage: jetstream.FileStorage, AllowBatchPublish: true, Duplicates: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Prefix: "signoff.v1", Replica: "r1", AuditAckTimeout: 2 * time.Second, AuditRetryLimit: limit}
	a := newAuditLog(nil, &cfg, slog.New(slog.DiscardHandler), NewMetrics(nil))
	if a.js, err = jetstream.New(nc, jetstream.WithPublishAsyncErrHandler(a.failed)); err != nil {
		t.Fatal(err)
	}
	if err := a.configure(nc, s); err != nil {
		t.Fatal(err)
	}
	if a.fast == nil {
		t.Fatal("the stream takes fast batches but the audit log does not use them")
	}
	t.Cleanup(a.fast.close)
	return a, s
}

// autoRecord is the record of an automatic decision of request id in session.
func autoRecord(a *auditLog, session, id, command string) messages.AuditRecord {
	args, _ := json.Marshal(map[string]string{"command": command})
	return a.record(&messages.Request{V: 1, RequestID: id, SessionID: session, AgentID: "a", Tool: "bash", Arguments: args},
		&messages.Decision{V: 1, RequestID: id, SessionID: session, Tool: "bash", Outcome: messages.OutcomeAllow,
			ReasonCode: messages.ReasonPolicyAllow, DecidedAt: time.Now().UTC()}, nil)
}

// storedAudit is one message of the stream: its Nats-Msg-Id, its records'
// ids and its record-count header.
type storedAudit struct {
	subject, msgID, count string
	records               []string
}

// stored waits until the stream holds want records and returns its
// messages in order.
func stored(t *testing.T, s jetstream.Stream, want int) []storedAudit {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []storedAudit
		n := 0
		for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := messages.AuditRecords(m.Data)
			if err != nil {
				t.Fatalf("message %d: %v", seq, err)
			}
			sa := storedAudit{subject: m.Subject, msgID: m.Header.Get(nats.MsgIdHdr), count: m.Header.Get(messages.AuditRecordsHeader)}
			for i := range recs {
				sa.records = append(sa.records, recs[i].Decision.RequestID)
			}
			n += len(recs)
			out = append(out, sa)
		}
		if n >= want || time.Now().After(deadline) {
			return out
		}
	}
}

// The records of one linger are one message per session: a session's
// several records as one AuditBatch in the order they were decided, a
// lone record as itself with its own id as Nats-Msg-Id — on the session's
// subject either way.
func TestAuditAppendsASessionsRecordsAsOneMessage(t *testing.T) {
	a, s := batchedAudit(t, 100)
	for _, r := range [][2]string{{"s-a", "a1"}, {"s-b", "b1"}, {"s-a", "a2"}, {"s-c", "c1"}, {"s-a", "a3"}, {"s-c", "c2"}} {
		rec := autoRecord(a, r[0], r[1], "ls")
		a.enqueue(&rec)
	}
	a.publishBatch()
	got := stored(t, s, 6)
	if len(got) != 3 {
		t.Fatalf("stream holds %d messages %+v, want 3 (one per session)", len(got), got)
	}
	want := []struct {
		subject, count string
		records        []string
	}{
		{"signoff.v1.audit.s-a", "3", []string{"a1", "a2", "a3"}},
		{"signoff.v1.audit.s-b", "", []string{"b1"}},
		{"signoff.v1.audit.s-c", "2", []string{"c1", "c2"}},
	}
	for i, w := range want {
		g := got[i]
		if g.subject != w.subject || g.count != w.count || !slices.Equal(g.records, w.records) {
			t.Errorf("message %d: %+v, want subject %s, %s header %q, records %v", i, g, w.subject,
				messages.AuditRecordsHeader, w.count, w.records)
		}
	}
	if !strings.HasPrefix(got[1].msgID, "s-b/b1/allow/policy_allow/") {
		t.Errorf("a lone record's Nats-Msg-Id is %q, want its record id", got[1].msgID)
	}
	if !strings.HasPrefix(got[0].msgID, "s-a/batch/") || got[0].msgID == got[2].msgID {
		t.Errorf("batch message ids %q and %q: want one per batch, under its session", got[0].msgID, got[2].msgID)
	}

	// The agent asks again and this replica decides the same: the same
	// record, not appended again, in a batch or alone. Another call under
	// a request id used before is a record of its own (red team: a reused
	// id hid the second call from the audit).
	for _, r := range [][3]string{{"s-a", "a2", "ls"}, {"s-a", "a4", "ls"}, {"s-b", "b1", "ls"}, {"s-b", "b1", "cat README.md"}} {
		rec := autoRecord(a, r[0], r[1], r[2])
		a.enqueue(&rec)
	}
	a.publishBatch()
	got = stored(t, s, 8)
	if len(got) != 5 || !slices.Equal(got[3].records, []string{"a4"}) || !slices.Equal(got[4].records, []string{"b1"}) {
		t.Errorf("after the agent's retries the stream holds %+v, want a4 alone and b1's other call alone", got)
	}
}

// A batch stays under batchBytes: a session's records beyond it go into
// the next message, and a record larger than the bound goes alone.
func TestAuditBatchesStayUnderTheirSizeBound(t *testing.T) {
	a, s := batchedAudit(t, 100)
	a.batchBytes = 2000
	big := strings.Repeat("x", 3000)
	for i, cmd := range []string{"ls", "ls", "ls", big, "ls"} {
		rec := autoRecord(a, "s-a", "r"+string(rune('0'+i)), cmd)
		a.enqueue(&rec)
	}
	a.publishBatch()
	got := stored(t, s, 5)
	var shape [][]string
	for _, g := range got {
		shape = append(shape, g.records)
	}
	// Each small record is about 500 bytes: three fit under 2,000.
	want := [][]string{{"r0", "r1", "r2"}, {"r3"}, {"r4"}}
	if len(shape) != len(want) {
		t.Fatalf("messages %v, want %v", shape, want)
	}
	for i := range want {
		if !slices.Equal(shape[i], want[i]) {
			t.Errorf("messages %v, want %v", shape, want)
		}
	}
}

// A batch the stream does not take is retried whole, counted by its
// records, and stored once when the stream is back.
func TestAFailedBatchIsRetriedAndCountedByItsRecords(t *testing.T) {
	a, s := batchedAudit(t, 100)
	ctx := context.Background()
	cfg := s.CachedInfo().Config
	js, err := jetstream.New(a.nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, cfg.Name); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		rec := autoRecord(a, "s-a", id, "ls")
		a.enqueue(&rec)
	}
	a.publishBatch()
	deadline := time.Now().Add(10 * time.Second)
	for a.pending() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("retry set holds %d records, want the batch's 3", a.pending())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := testutil.ToFloat64(a.m.AuditRetryPending); got != 3 {
		t.Errorf("signoff_audit_retry_pending = %v, want 3 records", got)
	}
	if s, err = js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second pass finds nothing left and stores nothing twice
		if sent, failed := a.resend(0, time.Second); failed != 0 {
			t.Fatalf("resend: sent %d, failed %d", sent, failed)
		}
	}
	if got := stored(t, s, 3); len(got) != 1 || !slices.Equal(got[0].records, []string{"r1", "r2", "r3"}) {
		t.Errorf("stream holds %+v, want the batch once", got)
	}
	if a.pending() != 0 || testutil.ToFloat64(a.m.AuditRetried) != 3 {
		t.Errorf("after the retry: %d pending, %v retried; want 0 and 3", a.pending(), testutil.ToFloat64(a.m.AuditRetried))
	}
}

// storedRecords returns the ids of the decisions' records in the stream
// now, those of batches included, in order.
func storedRecords(t *testing.T, s jetstream.Stream) []string {
	t.Helper()
	var ids []string
	for _, m := range stored(t, s, 0) {
		ids = append(ids, m.records...)
	}
	return ids
}

// A record too large for a stream message — the call's arguments grow
// in it: each '<' is encoded \u003c, the verdicts repeat the command — is
// stored clipped, its arguments by size and digest, rather than retried
// while the call it records has run (red team AW F7): appended alone, in
// a batch, and by Append.
func TestAnOversizedRecordIsStoredClipped(t *testing.T) {
	a, s := batchedAudit(t, 100)
	a.recordMax = 64 << 10
	// 20 KiB of arguments; the verdicts of ten sub-commands repeat the
	// command, as the analysis's do: a 220 KiB record.
	huge := "echo '" + strings.Repeat("x", 20<<10) + "'"
	padded := func(session, id string) messages.AuditRecord {
		r := autoRecord(a, session, id, huge)
		r.Risk = &messages.Risk{Tier: "exec"}
		for range 10 {
			r.Risk.Subcommands = append(r.Risk.Subcommands, messages.Verdict{Command: huge, Action: "allow"})
		}
		return r
	}
	big := padded("s-a", "big")
	small := autoRecord(a, "s-a", "small", "ls")
	alone := padded("s-b", "alone")
	for _, r := range []*messages.AuditRecord{&big, &small, &alone} {
		a.enqueue(r)
	}
	a.publishBatch()
	appended := padded("s-c", "strict")
	if err := a.Append(context.Background(), &appended); err != nil {
		t.Fatalf("Append of an oversized record: %v", err)
	}
	if got := storedRecords(t, s); !slices.Equal(got, []string{"big", "small", "alone", "strict"}) {
		t.Fatalf("stream holds %v, want every record", got)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clipped := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Data) > a.recordMax+auditBatchOverhead {
			t.Errorf("message %d is %d bytes, over the bound", seq, len(m.Data))
		}
		recs, err := messages.AuditRecords(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			orig := big
			switch r.Request.RequestID {
			case "small":
				if r.Clipped != nil {
					t.Errorf("the small record was clipped: %+v", r.Clipped)
				}
				continue
			case "alone":
				orig = alone
			case "strict":
				orig = appended
			}
			sum := sha256.Sum256(orig.Request.Arguments)
			if c := r.Clipped; c == nil || c.ArgumentsBytes != len(orig.Request.Arguments) ||
				c.ArgumentsSHA256 != hex.EncodeToString(sum[:]) || string(r.Request.Arguments) != "{}" || c.RecordBytes <= a.recordMax ||
				!bytes.Equal(c.Arguments, orig.Request.Arguments) {
				t.Errorf("record %s: clipped %+v, arguments %.40s; want its arguments' size, digest and bytes", r.Request.RequestID, r.Clipped, r.Request.Arguments)
			}
			clipped++
		}
	}
	if clipped != 3 {
		t.Errorf("%d records clipped, want 3", clipped)
	}
	if lost := testutil.ToFloat64(a.m.AuditLost.WithLabelValues("encode")); lost != 0 {
		t.Errorf("%v records lost", lost)
	}
}

// A record lost after this replica published it (the retry set full) is
// not held against the agent's retry of the same call: the retry is
// appended (red team AX F5: the recent ids named a record the stream
// never got, and the copy that could record the call was skipped).
func TestARetryOfACallWhoseRecordWasLostIsAppended(t *testing.T) {
	a, s := batchedAudit(t, 1)
	rec := autoRecord(a, "s-a", "a1", "ls")
	msgs := a.auditMessages([]messages.AuditRecord{rec}) // published: its id is among the recent ones
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	a.retrying = a.limit // the retry set is full: the failed append is lost
	a.failed(nil, msgs[0], errors.New("no responders"))
	if lost := testutil.ToFloat64(a.m.AuditLost.WithLabelValues("overflow")); lost != 1 {
		t.Fatalf("%v records lost to overflow, want 1", lost)
	}
	a.retrying = 0
	again := rec // the agent asks again; this replica decides the same
	a.enqueue(&again)
	a.publishBatch()
	var got []string
	for _, m := range stored(t, s, 1) { // waits up to 10 s for the record
		got = append(got, m.records...)
	}
	if !slices.Equal(got, []string{"a1"}) {
		t.Errorf("stream holds %v, want the call's record from its retry", got)
	}
}
