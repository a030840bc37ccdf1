package broker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// AuditMode says whether an allow waits for its audit record.
type AuditMode string

const (
	// AuditAsync (the default) replies first and appends the audit record
	// after: a record whose append fails is retried from this replica's
	// memory until the stream takes it. Only a crash of the replica (or a
	// retry queue full past Config.AuditRetryLimit) loses records, each
	// counted (docs/OPERATIONS.md, "Audit").
	AuditAsync AuditMode = "async"
	// AuditStrict replies no allow before the stream acknowledged its audit
	// record: an allow whose record cannot be stored becomes a deny of
	// reason unavailable. Denies are audited as in AuditAsync.
	AuditStrict AuditMode = "strict"
)

// ParseAuditMode parses the --audit flag's value ("" is AuditAsync).
func ParseAuditMode(s string) (AuditMode, error) {
	switch AuditMode(s) {
	case "", AuditAsync:
		return AuditAsync, nil
	case AuditStrict:
		return AuditStrict, nil
	}
	return "", fmt.Errorf("audit mode %q: want %s or %s", s, AuditAsync, AuditStrict)
}

// errUnencodable wraps the error of an audit record that cannot be encoded
// (engine.ErrUnencodable): retrying cannot help. Append counts it lost.
var errUnencodable = engine.ErrUnencodable

// auditMsgID is the Nats-Msg-Id of a decision's audit record appended
// alone: the same for every replica and every retry that records this
// decision, so the stream keeps one copy within its duplicate window.
func auditMsgID(rec *messages.AuditRecord) string { return messages.AuditRecordID(rec) }

// auditFlushTimeout bounds how long Run, shutting down, keeps trying to
// store the records still in memory before it counts them lost.
const auditFlushTimeout = 5 * time.Second

// Retry backoff of the audit retry loop after a pass with failures.
const (
	auditRetryMin = 100 * time.Millisecond
	auditRetryMax = 5 * time.Second
)

// auditLog appends decisions' audit records to the SIGNOFF_AUDIT stream.
//
// Two paths: Append waits for the stream's acknowledgement and returns the
// error (strict mode, and callers that retry on their own); enqueue hands
// the record to runBatches, which publishes it asynchronously within
// auditLinger (as one JetStream fast batch where the stream allows it:
// auditbatch.go), and never blocks the decision path. Every asynchronous
// append that fails (no acknowledgement within the ack timeout, no stream
// responding during a leader election, a disconnect, left out of a fast
// batch's count) reaches failed, which keeps the record in the retry set;
// run republishes the set with backoff until each record is acknowledged.
// The batch and the retry set are bounded: a record that does not fit is
// lost, counted and logged. Any append of a decision older than the
// stream's duplicate window looks its record up first (late).
type auditLog struct {
	js         jetstream.JetStream
	subj       messages.Subjects
	replica    string
	ackTimeout time.Duration
	limit      int
	log        *slog.Logger
	m          *Metrics

	// fast, when the stream allows batched publishing, publishes the
	// enqueued records as JetStream fast batches (auditbatch.go): one
	// acknowledgement per batch instead of one per record. nil: one
	// asynchronous publish per record.
	fast *fastPublisher
	// fastOff is set when the stream refused a batch because it does not
	// allow them (recreated without allow_batched): one publish per
	// record from then on.
	fastOff atomic.Bool

	// lateAfter is the age of a decision past which its append looks the
	// record up first (see late), on nc (the JetStream connection; nil:
	// no look-ups, as in tests without configure) under apiPrefix.
	lateAfter time.Duration
	nc        *nats.Conn
	apiPrefix string

	wake chan struct{} // a record entered or re-entered the retry set
	kick chan struct{} // the batch got its first record

	bmu   sync.Mutex
	batch []messages.AuditRecord // enqueued, published by runBatches

	// recent holds the ids of the records runBatches published lately
	// (owned by runBatches): an agent's retry of a request this replica
	// decided again, with the same outcome, is the same record and is not
	// appended twice. A record appended alone carries its id as its
	// Nats-Msg-Id and the stream would drop the copy; inside a batch it
	// would not.
	recent *messages.RecentRecords
	// forget is set when a record runBatches published was lost (the
	// retry set full, the broker stopping): the recent ids may then name
	// a record the stream does not hold, and an agent's retry of that
	// call must be appended. runBatches starts its recent ids afresh (red
	// team AX F5); a copy too many is what readers count once anyway.
	forget atomic.Bool

	// batchBytes is the most an AuditBatch message holds (auditBatchBytes,
	// less when the server's max_payload is smaller).
	batchBytes int
	// recordMax is the most a record encodes to before it is clipped
	// (messages.AuditRecord.Clip): the server's max_payload less room for
	// the headers.
	recordMax int

	mu       sync.Mutex
	retry    map[string]*auditRetry // by Nats-Msg-Id
	retrying int                    // records in retry
	closed   bool                   // run has given up what was left
}

// auditRetry is one record not yet stored.
type auditRetry struct {
	msg      *nats.Msg
	records  int       // in msg: 1, or an AuditBatch's
	first    time.Time // of the first failure; the decision is at most the ack timeout + auditLinger older
	attempts int
	sending  bool // published by run, acknowledgement awaited
}

func newAuditLog(js jetstream.JetStream, cfg *Config, log *slog.Logger, m *Metrics) *auditLog {
	subj, _ := messages.NewSubjects(cfg.publishPrefix())
	return &auditLog{
		js:         js,
		subj:       subj,
		replica:    cfg.Replica,
		ackTimeout: cfg.AuditAckTimeout,
		limit:      cfg.AuditRetryLimit,
		log:        log,
		m:          m,
		wake:       make(chan struct{}, 1),
		kick:       make(chan struct{}, 1),
		retry:      map[string]*auditRetry{},
		batchBytes: auditBatchBytes,
		recordMax:  1<<20 - auditHeaderRoom,
		recent:     messages.NewRecentRecords(recentAudits),
	}
}

// Late appends. The stream drops a repeated Nats-Msg-Id only within its
// duplicate window: an append of a record that may already be stored (its
// first append timed out, its outbox entry was carried out before) and that
// comes later than the window would store it twice. So an append of a
// decision older than lateAfter (the window less the ack timeout and
// auditClockSkew: the decision may have been made on another host) first
// looks the record up on its subject, and is a no-op when it is there.
const (
	// auditClockSkew is the clock difference between replicas allowed for.
	auditClockSkew = 5 * time.Second
	// auditMinLateAfter is the least time the broker relies on the
	// window for: a shorter window would have most retries look up.
	auditMinLateAfter = 30 * time.Second
)

// configure adopts the audit stream as the server keeps it: its duplicate
// window (refused when too short to cover the retries that rely on it),
// and fast batches for the asynchronous appends when it allows them (an
// older server ignores allow_batched). Called once, before run.
func (a *auditLog) configure(nc *nats.Conn, s jetstream.Stream) error {
	cfg := s.CachedInfo().Config
	a.nc, a.apiPrefix = nc, jetstream.DefaultAPIPrefix
	if mp := int(nc.MaxPayload()); mp > 0 {
		a.batchBytes = min(a.batchBytes, mp/2)
		a.recordMax = mp - auditHeaderRoom
	}
	a.lateAfter = cfg.Duplicates - a.ackTimeout - auditClockSkew
	if a.lateAfter < auditMinLateAfter {
		return fmt.Errorf("audit stream %s: its duplicate window %s is too short: audit retries rely on it for %s "+
			"past their decision (ack timeout %s + clock skew %s); want a window of at least %s (--audit-dedup-window)",
			cfg.Name, cfg.Duplicates, auditMinLateAfter, a.ackTimeout, auditClockSkew, auditMinLateAfter+a.ackTimeout+auditClockSkew)
	}
	if !cfg.AllowBatchPublish {
		a.log.Info("audit stream does not take fast batches (nats-server before 2.14): one publish per record")
		return nil
	}
	p, err := newFastPublisher(nc, a.ackTimeout)
	if err != nil {
		return err
	}
	a.fast = p
	return nil
}

// late reports whether an append of a record decided at decided may come
// after the stream's duplicate window has forgotten an earlier copy.
func (a *auditLog) late(decided time.Time) bool {
	return a.nc != nil && time.Since(decided) > a.lateAfter
}

// inStream reports whether the stream already holds msg's record, decided
// at decided: a message with its Nats-Msg-Id on its subject (the session's
// audit subject), stored after the decision (less auditClockSkew) — the
// read starts there, so a long session costs the records since then.
func (a *auditLog) inStream(ctx context.Context, msg *nats.Msg, decided time.Time) (bool, error) {
	id := msg.Header.Get(nats.MsgIdHdr)
	want := []byte(nats.MsgIdHdr + ": " + id + "\r\n")
	ctx, cancel := context.WithTimeout(ctx, a.ackTimeout)
	defer cancel()
	from := decided.Add(-auditClockSkew).UTC()
	req := msgGetRequest{NextFor: msg.Subject, StartTime: &from}
	for {
		m, err := a.getMsg(ctx, &req)
		if err != nil {
			return false, fmt.Errorf("look up audit record %s: %w", id, err)
		}
		if m == nil {
			return false, nil
		}
		if bytes.Contains(m.Header, want) {
			return true, nil
		}
		req = msgGetRequest{NextFor: msg.Subject, Seq: m.Sequence + 1}
	}
}

// msgGetRequest is JetStream's STREAM.MSG.GET request: the first message
// on NextFor from Seq, or from StartTime (which nats.go's GetMsg does not
// offer).
type msgGetRequest struct {
	Seq       uint64     `json:"seq,omitempty"`
	NextFor   string     `json:"next_by_subj"`
	StartTime *time.Time `json:"start_time,omitempty"`
}

// storedMsg is the message of a STREAM.MSG.GET reply.
type storedMsg struct {
	Sequence uint64 `json:"seq"`
	Header   []byte `json:"hdrs"`
}

// jsAPIError is the error of a JetStream API reply or a batch's answer.
type jsAPIError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

// getMsg asks the stream for req's message: nil when there is none.
func (a *auditLog) getMsg(ctx context.Context, req *msgGetRequest) (*storedMsg, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	rep, err := a.nc.RequestWithContext(ctx, a.apiPrefix+"STREAM.MSG.GET."+messages.AuditStream, body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Message *storedMsg  `json:"message"`
		Error   *jsAPIError `json:"error"`
	}
	if err := json.Unmarshal(rep.Data, &resp); err != nil {
		return nil, fmt.Errorf("unreadable reply %q: %w", rep.Data, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == msgNotFound:
		return nil, nil
	case resp.Error != nil:
		return nil, fmt.Errorf("%s (err_code %d)", resp.Error.Description, resp.Error.ErrCode)
	case resp.Message == nil:
		return nil, fmt.Errorf("reply without a message: %q", rep.Data)
	}
	return resp.Message, nil
}

// msgNotFound is JetStream's err_code for "no message found"
// (JSNoMessageFoundErr).
const msgNotFound = 10037

// record builds the audit record of dec.
func (a *auditLog) record(req *messages.Request, dec *messages.Decision, risk *messages.Risk) messages.AuditRecord {
	rec := messages.AuditRecord{
		V:        messages.Version,
		Request:  *req,
		Decision: *dec,
		Replica:  a.replica,
		Recorded: time.Now().UTC(),
	}
	if risk != nil && risk.Tier != "" {
		r := *risk
		rec.Risk = &r
	}
	return rec
}

// message encodes rec, of record id id, as the message appended alone to
// the stream. Encoded in a pooled buffer, then copied once at its exact
// size: the message keeps its data until the append is acknowledged.
func (a *auditLog) message(rec *messages.AuditRecord, id string) (*nats.Msg, error) {
	bp := encodeBufs.Get().(*[]byte)
	enc, err := a.appendRecord((*bp)[:0], rec)
	data := append([]byte(nil), enc...)
	putEncodeBuf(bp, enc)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errUnencodable, rec.Decision.RequestID, err)
	}
	return a.recordMsg(rec.Decision.SessionID, id, data), nil
}

// auditHeaderRoom is what a record message leaves of max_payload for its
// headers (the Nats-Msg-Id, a fast batch's reply subject).
const auditHeaderRoom = 4 << 10

// appendRecord appends rec's encoding to b, clipped (see
// messages.AuditRecord.Clip) when whole it would not fit a stream message:
// a call whose arguments grow in the record (each '<' is \u003c, the
// verdicts repeat the command) is recorded by their size and digest, not
// retried forever while it has run (red team AW F7). Its id stays the
// whole record's.
func (a *auditLog) appendRecord(b []byte, rec *messages.AuditRecord) ([]byte, error) {
	start := len(b)
	b, err := rec.AppendJSON(b)
	if err != nil || len(b)-start <= a.recordMax {
		return b, err
	}
	clipped := rec.Clip(len(b)-start, a.recordMax/2)
	a.log.Warn("audit record clipped: too large for a stream message; its arguments are recorded by size and digest",
		"request_id", rec.Decision.RequestID, "session_id", rec.Decision.SessionID, "record_bytes", len(b)-start, "limit", a.recordMax)
	return clipped.AppendJSON(b[:start])
}

// recordMsg is the stream message of one decision's encoded record, of
// record id id.
func (a *auditLog) recordMsg(session, id string, data []byte) *nats.Msg {
	// The header name is already canonical: no Header.Set.
	return &nats.Msg{Subject: a.subj.Audit(session), Data: data, Header: nats.Header{nats.MsgIdHdr: {id}}}
}

// Append stores rec in the stream and returns once the stream acknowledged
// it (a duplicate of a record stored before counts as stored), or with the
// error that kept it out: the caller decides whether to retry (not on
// errUnencodable). It waits at most the ack timeout. Safe for concurrent
// use.
func (a *auditLog) Append(ctx context.Context, rec *messages.AuditRecord) error {
	msg, err := a.message(rec, auditMsgID(rec))
	if err != nil {
		a.lostUnencodable(rec, err)
		return err
	}
	if a.late(rec.Decision.DecidedAt) {
		if there, err := a.inStream(ctx, msg, rec.Decision.DecidedAt); err != nil {
			a.m.AuditFailures.WithLabelValues(auditFailureKind(err)).Inc()
			return err
		} else if there {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, a.ackTimeout)
	defer cancel()
	if _, err := a.js.PublishMsg(ctx, msg); err != nil {
		a.m.AuditFailures.WithLabelValues(auditFailureKind(err)).Inc()
		return fmt.Errorf("audit append %s: %w", msg.Header.Get(nats.MsgIdHdr), err)
	}
	return nil
}

// enqueue appends rec without waiting for the acknowledgement: it hands
// rec to runBatches, which publishes it within auditLinger; failures go to
// the retry set. It never blocks. Safe for concurrent use.
func (a *auditLog) enqueue(rec *messages.AuditRecord) {
	a.bmu.Lock()
	if len(a.batch) >= a.limit {
		// runBatches is stalled behind a stream that acknowledges nothing
		// and the retry set is full too: the same bound applies.
		a.bmu.Unlock()
		a.m.AuditLost.WithLabelValues("overflow").Inc()
		a.log.Error("audit records lost: the retry queue is full", "msg_id", auditMsgID(rec), "count", 1, "limit", a.limit)
		return
	}
	a.batch = append(a.batch, *rec)
	first := len(a.batch) == 1
	a.bmu.Unlock()
	if first {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// auditLinger is how long a record waits for others before runBatches
// publishes them together. Publishing each record as its decision is
// replied had the broker, the NATS server and JetStream wake up once per
// record while the next request waited on the same two cores; a batch
// costs them one wakeup (docs/BENCHMARKS.md, "Broker as separate
// processes").
const auditLinger = 2 * time.Millisecond

// runBatches publishes the enqueued records, at most auditLinger after the
// first of a batch arrived, until ctx ends; then it publishes what is left.
func (a *auditLog) runBatches(ctx context.Context) {
	t := time.NewTimer(auditLinger)
	t.Stop()
	for {
		select {
		case <-ctx.Done():
			a.publishBatch()
			return
		case <-a.kick:
		}
		t.Reset(auditLinger)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		a.publishBatch()
	}
}

// publishBatch publishes every enqueued record asynchronously, each
// session's records together (auditMessages): as fast batches when the
// stream allows them, else one publish per message. A message the stream
// does not store (a batch's acknowledgement counts fewer, a timeout, no
// stream) or the publisher refuses at once (too many unacknowledged
// appends for the ack timeout, a closed connection) goes to the retry set.
func (a *auditLog) publishBatch() {
	a.bmu.Lock()
	batch := a.batch
	a.batch = nil
	a.bmu.Unlock()
	msgs := a.auditMessages(batch)
	if a.fast != nil && !a.fastOff.Load() {
		for len(msgs) > 0 {
			n := min(len(msgs), fastBatchMax)
			chunk := msgs[:n:n]
			msgs = msgs[n:]
			a.fast.publish(chunk, func(stored int, err error) {
				var refused *fastBatchError
				if errors.As(err, &refused) && refused.code == fastBatchDisabled && !a.fastOff.Swap(true) {
					a.log.Warn("the audit stream no longer takes fast batches (recreated without allow_batched?); "+
						"one publish per record until the broker restarts", "err", err)
				}
				for _, m := range chunk[stored:] {
					a.failed(nil, m, err)
				}
			})
		}
		return
	}
	for _, msg := range msgs {
		if _, err := a.js.PublishMsgAsync(msg, jetstream.WithStallWait(a.ackTimeout)); err != nil {
			a.failed(nil, msg, err)
		}
	}
}

// auditBatchBytes is the most an AuditBatch message holds: well under
// NATS's default max_payload (1 MiB), so a batch never fails for its size
// (a record alone may be larger, up to recordMax, past which it is
// clipped).
const auditBatchBytes = 256 << 10

// auditMessages encodes the records of one linger as the stream's
// messages, in the order their sessions first appear: the records of a
// session together as one messages.AuditBatch on its audit subject (split
// at batchBytes), a record that has no other of its session beside it
// alone, as itself. A session's records keep their order. One message per
// session instead of one per decision is what lets the stream keep up
// with the automatic path (docs/BENCHMARKS.md "Broker as separate
// processes"). A record that cannot be encoded is counted lost.
func (a *auditLog) auditMessages(batch []messages.AuditRecord) []*nats.Msg {
	if a.forget.Swap(false) {
		a.recent = messages.NewRecentRecords(recentAudits)
	}
	ids := make([]string, len(batch))
	for i := range batch {
		ids[i] = auditMsgID(&batch[i])
	}
	if len(batch) == 1 {
		if a.recent.Seen(ids[0]) {
			return nil
		}
		msg, err := a.message(&batch[0], ids[0])
		if err != nil {
			a.lostUnencodable(&batch[0], err)
			return nil
		}
		return []*nats.Msg{msg}
	}
	sessions := map[string][]int{}
	var order []string
	for i := range batch {
		if a.recent.Seen(ids[i]) {
			continue
		}
		s := batch[i].Decision.SessionID
		if _, ok := sessions[s]; !ok {
			order = append(order, s)
		}
		sessions[s] = append(sessions[s], i)
	}
	msgs := make([]*nats.Msg, 0, len(order))
	bp := encodeBufs.Get().(*[]byte)
	enc := (*bp)[:0]
	var ends []int
	var kept []string // the ids of the records encoded
	for _, s := range order {
		enc, ends, kept = enc[:0], ends[:0], kept[:0]
		for _, i := range sessions[s] {
			start := len(enc)
			out, err := a.appendRecord(enc, &batch[i])
			if err != nil {
				enc = out[:start]
				a.lostUnencodable(&batch[i], fmt.Errorf("%w: %s: %w", errUnencodable, batch[i].Decision.RequestID, err))
				continue
			}
			enc = out
			ends, kept = append(ends, len(enc)), append(kept, ids[i])
		}
		msgs = a.appendSessionMsgs(msgs, s, enc, ends, kept)
	}
	putEncodeBuf(bp, enc)
	return msgs
}

// appendSessionMsgs appends the messages of session's encoded records
// (record i is enc[ends[i-1]:ends[i]], of id ids[i]) to msgs: as many
// AuditBatches of at most batchBytes as they need, a record alone as
// itself.
func (a *auditLog) appendSessionMsgs(msgs []*nats.Msg, session string, enc []byte, ends []int, ids []string) []*nats.Msg {
	start := func(i int) int {
		if i == 0 {
			return 0
		}
		return ends[i-1]
	}
	for from := 0; from < len(ids); {
		to := from + 1
		for to < len(ids) && ends[to]-start(from)+auditBatchOverhead+len(session) <= a.batchBytes {
			to++
		}
		if to-from == 1 {
			msgs = append(msgs, a.recordMsg(session, ids[from], append([]byte(nil), enc[start(from):ends[from]]...)))
			from = to
			continue
		}
		parts := make([][]byte, 0, to-from)
		digest := sha256.New()
		for i := from; i < to; i++ {
			parts = append(parts, enc[start(i):ends[i]])
			digest.Write([]byte(ids[i]))
			digest.Write([]byte{'\n'})
		}
		data := messages.AppendAuditBatch(make([]byte, 0, ends[to-1]-start(from)+to-from+auditBatchOverhead+len(session)), session, parts)
		sum := digest.Sum(nil)
		msgs = append(msgs, &nats.Msg{Subject: a.subj.Audit(session), Data: data, Header: nats.Header{
			nats.MsgIdHdr:               {session + "/batch/" + hex.EncodeToString(sum[:16])},
			messages.AuditRecordsHeader: {strconv.Itoa(to - from)},
		}})
		from = to
	}
	return msgs
}

// recentAudits bounds the record ids a replica remembers (about 100 bytes
// each): at a thousand automatic decisions a second, the last minute; an
// agent asks again after its attempt timeout, seconds later.
const recentAudits = 1 << 16

// auditBatchOverhead bounds the bytes of an AuditBatch besides its
// records and its session id (the braces, "v", "type", the commas).
const auditBatchOverhead = 128

// lostUnencodable counts and logs rec, which cannot be encoded.
func (a *auditLog) lostUnencodable(rec *messages.AuditRecord, err error) {
	a.m.AuditLost.WithLabelValues("encode").Inc()
	a.log.Error("audit record lost: cannot encode it", "request_id", rec.Decision.RequestID,
		"session_id", rec.Decision.SessionID, "err", err)
}

// recordsIn is how many decisions' records msg holds: an AuditBatch says
// it in its header; any other is one.
func recordsIn(msg *nats.Msg) int {
	if n, err := strconv.Atoi(msg.Header.Get(messages.AuditRecordsHeader)); err == nil && n > 0 {
		return n
	}
	return 1
}

// inflight is the number of records published and not yet acknowledged on
// their first append.
func (a *auditLog) inflight() int {
	n := a.js.PublishAsyncPending()
	if a.fast != nil {
		n += a.fast.pending()
	}
	return n
}

// batched is the number of records waiting for runBatches.
func (a *auditLog) batched() int {
	a.bmu.Lock()
	defer a.bmu.Unlock()
	return len(a.batch)
}

// failed is the asynchronous publisher's error callback (and enqueue's for
// errors returned at once): it keeps msg in the retry set and wakes run.
// The first failure of a record is logged at WARN, later ones at DEBUG.
func (a *auditLog) failed(_ jetstream.JetStream, msg *nats.Msg, err error) {
	kind, n := auditFailureKind(err), recordsIn(msg)
	a.m.AuditFailures.WithLabelValues(kind).Add(float64(n))
	a.m.NATSErrors.WithLabelValues("audit").Inc()
	id := msg.Header.Get(nats.MsgIdHdr)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.m.AuditLost.WithLabelValues("shutdown").Add(float64(n))
		a.forget.Store(true)
		a.log.Error("audit records lost: the broker stopped before the stream took them", "msg_id", id, "count", n, "err", err)
		return
	}
	if r, ok := a.retry[id]; ok {
		r.attempts++
		r.sending = false
		attempts, first := r.attempts, r.first
		a.mu.Unlock()
		// A record that keeps failing is logged again at WARN after 4,
		// 16, 64… attempts, with the latest reason: an operator sees what
		// keeps it out without a line per attempt.
		level := slog.LevelDebug
		if attempts&(attempts-1) == 0 && attempts >= 4 && bits.TrailingZeros(uint(attempts))%2 == 0 {
			level = slog.LevelWarn
		}
		a.log.Log(context.Background(), level, "audit append failed again; retrying", "msg_id", id, "attempts", attempts,
			"pending_for", time.Since(first).Round(time.Millisecond), "reason", kind, "err", err)
		a.poke()
		return
	}
	if a.retrying+n > a.limit {
		a.mu.Unlock()
		a.m.AuditLost.WithLabelValues("overflow").Add(float64(n))
		a.forget.Store(true)
		a.log.Error("audit records lost: the retry queue is full", "msg_id", id, "count", n, "limit", a.limit, "err", err)
		return
	}
	a.retry[id] = &auditRetry{msg: msg, records: n, first: time.Now(), attempts: 1}
	a.retrying += n
	a.m.AuditRetryPending.Set(float64(a.retrying))
	a.mu.Unlock()
	a.log.Warn("audit records not stored yet; retrying from memory", "msg_id", id, "count", n, "subject", msg.Subject,
		"reason", kind, "err", err)
	a.poke()
}

func (a *auditLog) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// auditFailureKind labels err for the failure metric.
func auditFailureKind(err error) string {
	switch {
	case errors.Is(err, jetstream.ErrAsyncPublishTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return "timeout"
	case errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrNoResponders):
		return "no_stream"
	case errors.Is(err, jetstream.ErrTooManyStalledMsgs):
		return "stalled"
	case errors.Is(err, nats.ErrDisconnected), errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrConnectionDraining):
		return "disconnected"
	}
	var apiErr *jetstream.APIError
	var batchErr *fastBatchError
	if errors.As(err, &apiErr) || errors.As(err, &batchErr) || errors.Is(err, errFastBatchGap) {
		return "rejected"
	}
	return "other"
}

// run publishes the enqueued records (runBatches, which it owns) and
// republishes the retry set until ctx ends, then tries for at most
// auditFlushTimeout more and counts what is left as lost. Broker.Run owns
// it.
func (a *auditLog) run(ctx context.Context) {
	var batches sync.WaitGroup
	batches.Add(1)
	go func() { defer batches.Done(); a.runBatches(ctx) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	retry := backoff.Policy{Min: auditRetryMin, Max: auditRetryMax}
	failures := 0
	for {
		select {
		case <-ctx.Done():
			batches.Wait()
			a.flush()
			return
		case <-a.wake:
		case <-tick.C:
			a.m.AuditInflight.Set(float64(a.inflight() + a.batched()))
		}
		// After a failed pass, probe with a few records rather than
		// pour the whole set into a stream that may still be away.
		probe := 0
		if failures > 0 {
			probe = auditProbe
		}
		sent, failed := a.resend(probe, auditFlushTimeout)
		if failed > 0 {
			failures++
			_ = backoff.Sleep(ctx, retry.Delay(failures)) // ctx's end is seen at the top
		} else {
			failures = 0
			if sent > 0 && a.pending() > 0 {
				a.poke() // the probe went through: send the rest now
			}
		}
	}
}

// auditProbe is how many records a retry pass sends after a pass that
// failed.
const auditProbe = 256

// resend publishes the records of the retry set not already in flight (at
// most limit of them when limit > 0) and waits (at most wait past the ack
// timeout) for their acknowledgements. It returns how many it sent and how
// many of those failed again.
func (a *auditLog) resend(limit int, wait time.Duration) (sent, failed int) {
	a.mu.Lock()
	batch := make([]*auditRetry, 0, len(a.retry))
	for _, r := range a.retry {
		if limit > 0 && len(batch) == limit {
			break
		}
		if !r.sending {
			r.sending = true
			batch = append(batch, r)
		}
	}
	a.mu.Unlock()
	if len(batch) == 0 {
		return 0, 0
	}
	futures := make([]jetstream.PubAckFuture, len(batch))
	there := make([]bool, len(batch))
	for i, r := range batch {
		if decided := r.first.Add(-a.ackTimeout - auditLinger); a.late(decided) {
			found, err := a.inStream(context.Background(), r.msg, decided)
			if err != nil {
				a.failed(nil, r.msg, err)
				continue
			}
			if found {
				there[i] = true
				continue
			}
		}
		// A background goroutine: it may wait for room among the
		// unacknowledged appends.
		f, err := a.js.PublishMsgAsync(r.msg, jetstream.WithStallWait(a.ackTimeout))
		if err != nil {
			a.failed(nil, r.msg, err)
			continue
		}
		futures[i] = f
	}
	stored := 0
	deadline := time.NewTimer(a.ackTimeout + wait)
	defer deadline.Stop()
	for i, f := range futures {
		if there[i] {
			stored++
			a.stored(batch[i])
			continue
		}
		if f == nil {
			failed++
			continue
		}
		select {
		case <-f.Ok():
			stored++
			a.stored(batch[i])
		case <-f.Err(): // failed has the record back in the retry set
			failed++
		case <-deadline.C:
			// The publisher's ack timeout ends every future; this only
			// guards against a connection closed under it.
			a.mu.Lock()
			for _, r := range batch[i:] {
				r.sending = false
			}
			a.mu.Unlock()
			return len(batch), failed + len(futures) - i
		}
	}
	if stored > 0 {
		a.log.Info("audit records stored after retrying", "count", stored, "still_pending", a.pending())
	}
	return len(batch), failed
}

// stored takes r out of the retry set.
func (a *auditLog) stored(r *auditRetry) {
	a.m.AuditRetried.Add(float64(r.records))
	a.mu.Lock()
	delete(a.retry, r.msg.Header.Get(nats.MsgIdHdr))
	a.retrying -= r.records
	a.m.AuditRetryPending.Set(float64(a.retrying))
	a.mu.Unlock()
}

// pending is the number of records in the retry set.
func (a *auditLog) pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.retrying
}

// flush is run's last act: for at most auditFlushTimeout it waits for the
// appends in flight and retries the retry set, then counts every record
// still not stored as lost (reason shutdown) and logs them.
func (a *auditLog) flush() {
	deadline := time.Now().Add(auditFlushTimeout)
	if a.fast != nil {
		// Batches still unanswered end in the retry set or stored.
		a.fast.wait(deadline)
		defer a.fast.close()
	}
	for a.pending() > 0 && time.Now().Before(deadline) {
		if _, failed := a.resend(0, time.Until(deadline)); failed > 0 {
			time.Sleep(min(auditRetryMin, time.Until(deadline)))
		}
	}
	select {
	case <-a.js.PublishAsyncComplete():
	case <-time.After(max(time.Until(deadline), 0)):
	}
	a.mu.Lock()
	a.closed = true
	left, lost := make([]string, 0, len(a.retry)), 0
	for id, r := range a.retry {
		if !r.sending {
			left = append(left, id)
			lost += r.records
		}
	}
	for _, id := range left {
		delete(a.retry, id)
	}
	a.retrying -= lost
	a.m.AuditRetryPending.Set(float64(a.retrying))
	a.mu.Unlock()
	inflight := a.inflight()
	a.m.AuditInflight.Set(float64(inflight))
	if lost > 0 {
		a.m.AuditLost.WithLabelValues("shutdown").Add(float64(lost))
		a.log.Error("audit records lost: the broker stopped before the stream took them", "count", lost,
			"msg_ids", strings.Join(left[:min(len(left), 20)], ","))
	}
	if inflight > 0 {
		a.log.Warn("broker stopped with audit appends unacknowledged; a failure still reaching this replica is counted lost",
			"count", inflight)
	}
}
