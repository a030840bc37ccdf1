package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// JetStream fast batch publishing (nats-server 2.14+, ADR-50), used for the
// asynchronous audit appends when the stream allows it (allow_batched).
//
// A batch is a run of ordinary publishes whose reply subject carries the
// batch: <prefix>.<batch id>.<flow>.<gap mode>.<batch sequence>.<op>.$FI.
// The stream stores each message as it arrives, with the usual
// per-message checks (the Nats-Msg-Id de-duplication included: a
// duplicate counts as stored), and answers the batch once, when the
// message with the commit operation is stored, instead of once per
// message. In gap mode "fail" that acknowledgement's count says how many
// of the batch's messages, from the first, are stored; the rest were
// not and go to the retry set, as a failed single append does.
//
// Wire details (nats-server's server/stream.go, getFastBatch and
// processJetStreamFastBatchMsg):
//   - operations: 0 start (sequence 1), 1 append, 2 commit (the last
//     message; a one-message batch is a commit at sequence 1);
//   - replies on the reply subject: {"type":"ack"} flow acknowledgements
//     (ignored: a batch is at most fastBatchMax messages), {"type":"gap"}
//     and {"type":"err"} reports (the final acknowledgement follows), and
//     the final acknowledgement, a PubAck with "batch" and "count" or with
//     an "error";
//   - no stream listening: a 503 no-responders status.
const (
	fastBatchSuffix = ".$FI"
	fastOpStart     = "0"
	fastOpAppend    = "1"
	fastOpCommit    = "2"
	// fastBatchFlow asks for flow acknowledgements at most every this
	// many messages: a batch never needs one.
	fastBatchFlow = "500"
	// fastBatchMax is the most messages in one batch (the server's flow
	// control starts at 500 messages; a longer run is split).
	fastBatchMax = 500
)

// fastPublisher publishes batches of audit messages as JetStream fast
// batches on nc and resolves each batch once: stored up to its count, or
// failed (no answer within the ack timeout, an error, no stream).
type fastPublisher struct {
	nc         *nats.Conn
	prefix     string // the reply subjects' prefix, unique to this publisher
	ackTimeout time.Duration
	sub        *nats.Subscription

	mu      sync.Mutex
	batches map[string]*fastBatch // in flight, by batch id
	records int                   // records in the batches in flight
	idle    chan struct{}         // closed and replaced when batches empties
}

// fastBatch is one batch in flight.
type fastBatch struct {
	msgs    []*nats.Msg
	records int // in msgs (an AuditBatch message holds several)
	timer   *time.Timer
	done    func(stored int, err error) // called once, outside the lock
	// sending is set while publish is still sending msgs: an answer that
	// arrives meanwhile (a refusal of the first message, no responders)
	// is kept in outcome and reported when publish is done with msgs,
	// which the callback hands to the retry set.
	sending bool
	outcome *fastOutcome
}

// fastOutcome is a batch's answer: how many of its messages, from the
// first, the stream stored, and the error that kept the rest out.
type fastOutcome struct {
	stored int
	err    error
}

// errFastBatchTimeout is a batch's failure when its acknowledgement did not
// arrive within the ack timeout.
var errFastBatchTimeout = fmt.Errorf("fast batch: %w", nats.ErrTimeout)

func newFastPublisher(nc *nats.Conn, ackTimeout time.Duration) (*fastPublisher, error) {
	p := &fastPublisher{
		nc:         nc,
		prefix:     nc.NewRespInbox(),
		ackTimeout: ackTimeout,
		batches:    map[string]*fastBatch{},
		idle:       make(chan struct{}),
	}
	sub, err := nc.Subscribe(p.prefix+".>", p.onReply)
	if err != nil {
		return nil, fmt.Errorf("fast batch replies: %w", err)
	}
	_ = sub.SetPendingLimits(-1, -1)
	p.sub = sub
	return p, nil
}

// close stops taking replies: batches still in flight end by their timer.
func (p *fastPublisher) close() {
	_ = p.sub.Unsubscribe()
}

// publish sends msgs (at most fastBatchMax) as one batch; done is called
// once with how many of them, from the first, the stream stored, and the
// error that kept the rest out — never before publish is done with msgs
// (their Reply is empty again then). publish itself never blocks on the
// stream.
func (p *fastPublisher) publish(msgs []*nats.Msg, done func(stored int, err error)) {
	id := nuid.Next()
	b := &fastBatch{msgs: msgs, done: done, sending: true}
	for _, m := range msgs {
		b.records += recordsIn(m)
	}
	p.mu.Lock()
	p.batches[id] = b
	p.records += b.records
	b.timer = time.AfterFunc(p.ackTimeout, func() { p.resolve(id, 0, errFastBatchTimeout) })
	p.mu.Unlock()

	base := p.prefix + "." + id + "." + fastBatchFlow + ".fail."
	for i, m := range msgs {
		op := fastOpAppend
		switch {
		case i == len(msgs)-1:
			op = fastOpCommit
		case i == 0:
			op = fastOpStart
		}
		m.Reply = base + strconv.Itoa(i+1) + "." + op + fastBatchSuffix
		if err := p.nc.PublishMsg(m); err != nil {
			// The messages before i may still be stored: the batch's
			// answer (or its timeout) says; what is not stored is
			// retried either way, and the retries are idempotent.
			p.resolve(id, 0, err)
			break
		}
	}
	for _, m := range msgs {
		m.Reply = "" // a retry is a plain acknowledged publish
	}
	p.mu.Lock()
	b.sending = false
	o := b.outcome
	p.mu.Unlock()
	if o != nil {
		b.done(o.stored, o.err)
	}
}

// fastReply is any answer on a batch's reply subject: a flow message
// (type ack, gap or err) or the final PubAck.
type fastReply struct {
	Type  string      `json:"type"`
	Batch string      `json:"batch"`
	Count int         `json:"count"`
	Error *jsAPIError `json:"error"`
}

// onReply handles an answer of the stream to a batch.
func (p *fastPublisher) onReply(m *nats.Msg) {
	id := fastBatchID(m.Subject, p.prefix)
	if id == "" {
		return
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		p.resolve(id, 0, nats.ErrNoResponders)
		return
	}
	var r fastReply
	if err := json.Unmarshal(m.Data, &r); err != nil {
		p.resolve(id, 0, fmt.Errorf("fast batch: unreadable answer %q: %w", m.Data, err))
		return
	}
	switch {
	case r.Type != "":
		// A flow acknowledgement, or a gap or error report: in gap mode
		// fail the final PubAck follows and counts what was stored.
		return
	case r.Error != nil:
		// A batch refused at its first message (or one the server no
		// longer knows): nothing after what an earlier answer counted.
		p.resolve(id, 0, &fastBatchError{code: r.Error.ErrCode, desc: r.Error.Description})
	default:
		p.resolve(id, r.Count, nil)
	}
}

// fastBatchDisabled is the err_code of the refusal of a batch by a stream
// that does not allow batches (JSBatchPublishDisabledErr).
const fastBatchDisabled = 10205

// fastBatchError is the stream's refusal of a batch.
type fastBatchError struct {
	code int
	desc string
}

func (e *fastBatchError) Error() string {
	return fmt.Sprintf("fast batch refused: %s (err_code %d)", e.desc, e.code)
}

// fastBatchID is the batch id in a reply subject
// <prefix>.<id>.<flow>.<gap>.<seq>.<op>.$FI, or "" when subj is not one.
func fastBatchID(subj, prefix string) string {
	if len(subj) <= len(prefix)+1 || subj[:len(prefix)] != prefix || subj[len(prefix)] != '.' {
		return ""
	}
	rest := subj[len(prefix)+1:]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '.' {
			return rest[:i]
		}
	}
	return ""
}

// resolve ends batch id (the first answer wins; later ones are ignored):
// stored of its messages, from the first, are in the stream. A batch whose
// answer counts fewer than it sent without an error failed with a gap.
func (p *fastPublisher) resolve(id string, stored int, err error) {
	p.mu.Lock()
	b, ok := p.batches[id]
	if !ok {
		p.mu.Unlock()
		return
	}
	delete(p.batches, id)
	p.records -= b.records
	if len(p.batches) == 0 {
		close(p.idle)
		p.idle = make(chan struct{})
	}
	b.timer.Stop()
	stored = min(max(stored, 0), len(b.msgs))
	if stored < len(b.msgs) && err == nil {
		err = errFastBatchGap
	}
	if b.sending {
		b.outcome = &fastOutcome{stored, err} // publish reports it
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	b.done(stored, err)
}

// errFastBatchGap is the failure of the messages of a batch past the count
// its acknowledgement confirmed (each got a gap or error report).
var errFastBatchGap = errors.New("fast batch: message not stored (the stream reported a gap or an error)")

// pending is the number of records in batches not yet answered.
func (p *fastPublisher) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.records
}

// wait returns when no batch is in flight, or at deadline.
func (p *fastPublisher) wait(deadline time.Time) {
	for {
		p.mu.Lock()
		n, idle := len(p.batches), p.idle
		p.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-idle:
		case <-time.After(time.Until(deadline)):
			return
		}
	}
}
