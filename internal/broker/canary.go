package broker

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// A policy canary (docs/OPERATIONS.md "Canary") is kept in the modes
// bucket, as the shadow policy is: the key canaryKey holds the canary
// (messages.Canary, JSON), and each replica writes the counts of the
// canary's decisions it made in the current window under
// canaryCountPrefix+<replica>. Every replica watches the bucket, so each
// knows the canary and every replica's counts; the one that first sees a
// rate past its bound rewrites the canary as rolled back with a
// compare-and-set on the key's revision, so exactly one replica rolls it
// back, records it in the audit stream and logs it, and every replica
// stops applying the candidate when the watch delivers the change.
const (
	canaryKey         = "canary.policy"
	canaryCountPrefix = "canary.n."
	canaryFile        = "canary-policy.yaml"
	// canaryTick is how often a replica publishes its counts and checks
	// the rates.
	canaryTick = 200 * time.Millisecond
)

// canaryRunning is a canary with its parsed candidate; immutable.
type canaryRunning struct {
	c *messages.Canary
	p *policy.Policy
}

// canaryCount is one replica's counts of a canary's window.
type canaryCount struct {
	ID   string `json:"id"`
	Slot int64  `json:"slot"`
	messages.CanaryCounts
}

// canaryState is this replica's view of the canary: the one in force
// (nil: none, or unreadable: the live policy decides), the other
// replicas' counts, and its own.
type canaryState struct {
	cur atomic.Pointer[canaryRunning]

	mu     sync.Mutex
	others map[string]canaryCount // by bucket key
	local  canaryCount
	dirty  bool
}

// PolicyFor is the engine's engine.Canary: the candidate for a call the
// active canary covers, else nil.
func (s *canaryState) PolicyFor(sessionID, agentID, agentType string) *policy.Policy {
	r := s.cur.Load()
	if r == nil || !r.c.Covers(sessionID, agentID, agentType) {
		return nil
	}
	return r.p
}

var _ engine.Canary = (*canaryState)(nil)

// entry follows a canary key of the bucket.
func (s *canaryState) entry(e jetstream.KeyValueEntry, log *slog.Logger) {
	deleted := e.Operation() != jetstream.KeyValuePut
	if e.Key() != canaryKey {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.others == nil {
			s.others = map[string]canaryCount{}
		}
		var n canaryCount
		if deleted || json.Unmarshal(e.Value(), &n) != nil {
			delete(s.others, e.Key())
			return
		}
		s.others[e.Key()] = n
		return
	}
	s.apply(e.Value(), deleted, log)
}

// apply follows the canary key. A value that does not decode or whose
// policy does not parse leaves no canary: the live policy decides.
func (s *canaryState) apply(value []byte, deleted bool, log *slog.Logger) {
	if deleted {
		if s.cur.Swap(nil) != nil {
			log.Info("canary cleared")
		}
		return
	}
	var c messages.Canary
	if err := json.Unmarshal(value, &c); err != nil {
		s.cur.Store(nil)
		log.Error("ignoring a canary that does not decode; the live policy decides", "err", err)
		return
	}
	p, err := policy.Parse([]byte(c.Spec.Policy), canaryFile)
	if err != nil {
		s.cur.Store(nil)
		log.Error("ignoring a canary whose policy does not parse; the live policy decides", "err", err)
		return
	}
	old := s.cur.Swap(&canaryRunning{c: &c, p: p})
	if c.State != messages.CanaryActive {
		log.Info("canary not applied", "canary_id", c.ID, "state", c.State)
		return
	}
	if old == nil || old.c.ID != c.ID {
		log.Info("canary set", "canary_id", c.ID, "policy_version", c.PolicyVersion, "share_percent", c.Spec.SharePercent)
	}
}

// slot is the window of c that t falls in.
func slot(c *messages.Canary, t time.Time) int64 {
	return int64(t.Sub(c.SetAt) / c.Spec.Window())
}

// count counts one decision of the canary whose verdict was action.
func (s *canaryState) count(c *messages.Canary, action string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := slot(c, now)
	if s.local.ID != c.ID || s.local.Slot != n {
		s.local = canaryCount{ID: c.ID, Slot: n}
	}
	switch action {
	case "allow":
		s.local.Allow++
	case "ask":
		s.local.Ask++
	case "deny":
		s.local.Deny++
	}
	s.dirty = true
}

// totals sums every replica's counts of c's window at now; mine is this
// replica's key (its own counts are taken from memory, not the bucket).
func (s *canaryState) totals(c *messages.Canary, mine string, now time.Time) messages.CanaryCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := slot(c, now)
	var sum messages.CanaryCounts
	add := func(x canaryCount) {
		if x.ID == c.ID && x.Slot == n {
			sum.Allow += x.Allow
			sum.Ask += x.Ask
			sum.Deny += x.Deny
		}
	}
	for k, x := range s.others {
		if k != mine {
			add(x)
		}
	}
	add(s.local)
	return sum
}

// takeDirty returns this replica's counts if they changed since the last
// call.
func (s *canaryState) takeDirty() (canaryCount, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dirty
	s.dirty = false
	return s.local, d
}

// canaryCountKey is this replica's counts key.
func (b *Broker) canaryCountKey() string {
	return canaryCountPrefix + base64.RawURLEncoding.EncodeToString([]byte(b.cfg.Replica))
}

// canaryObserve counts the decision res of req when the canary covers it:
// allow and deny by the policy (or a grant), pending as ask. Retries,
// errors, hard stops and store failures are not the candidate's verdicts.
func (b *Broker) canaryObserve(req *messages.Request, res *engine.Result) {
	r := b.modes.canary.cur.Load()
	if r == nil || !r.c.Covers(req.SessionID, req.AgentID, req.AgentType) {
		return
	}
	action := ""
	switch res.Label {
	case "pending":
		action = "ask"
	case "allow", "deny":
		rc := res.Receipt()
		if rc.Decision == nil || rc.Decision.ReasonCode == messages.ReasonHardStop || rc.Decision.ReasonCode == messages.ReasonUnavailable {
			return
		}
		action = res.Label
	default:
		return
	}
	b.modes.canary.count(r.c, action, time.Now())
}

// canaryMark marks the audit record of req when the canary covers it.
func (b *Broker) canaryMark(req *messages.Request) *messages.CanaryMark {
	r := b.modes.canary.cur.Load()
	if r == nil || !r.c.Covers(req.SessionID, req.AgentID, req.AgentType) {
		return nil
	}
	return &messages.CanaryMark{ID: r.c.ID, PolicyVersion: r.c.PolicyVersion}
}

// runCanary publishes this replica's counts and checks the canary's rates
// every canaryTick until ctx is done.
func (b *Broker) runCanary(ctx context.Context) {
	if b.modes.kv == nil {
		return
	}
	every(ctx, canaryTick, func() { b.checkCanary(ctx, time.Now()) })
}

// checkCanary is one tick of runCanary.
func (b *Broker) checkCanary(ctx context.Context, now time.Time) {
	r := b.modes.canary.cur.Load()
	if r == nil || r.c.State != messages.CanaryActive {
		return
	}
	if n, dirty := b.modes.canary.takeDirty(); dirty {
		data, _ := json.Marshal(n)
		kctx, cancel := context.WithTimeout(ctx, b.cfg.StoreTimeout)
		if _, err := b.modes.kv.Put(kctx, b.canaryCountKey(), data); err != nil {
			b.m.NATSErrors.WithLabelValues("kv").Inc()
			b.log.Warn("canary: cannot publish this replica's counts", "err", err)
		}
		cancel()
	}
	sum := b.modes.canary.totals(r.c, b.canaryCountKey(), now)
	if reason := overBound(r.c, sum); reason != "" {
		b.rollBackCanary(ctx, r.c, sum, reason)
	}
}

// overBound says which bound of c the counts pass ("" none).
func overBound(c *messages.Canary, n messages.CanaryCounts) string {
	total := n.Total()
	if total < c.Spec.MinRequests {
		return ""
	}
	if ask := float64(n.Ask) / float64(total); ask > c.Spec.MaxAskRate {
		return fmt.Sprintf("ask rate %.3f > %.3f over %d decisions", ask, c.Spec.MaxAskRate, total)
	}
	if deny := float64(n.Deny) / float64(total); deny > c.Spec.MaxDenyRate {
		return fmt.Sprintf("deny rate %.3f > %.3f over %d decisions", deny, c.Spec.MaxDenyRate, total)
	}
	return ""
}

// rollBackCanary rewrites the canary as rolled back if it is still c and
// active, with a compare-and-set on its revision: of the replicas that
// try, one wins, and only it records the rollback.
func (b *Broker) rollBackCanary(ctx context.Context, c *messages.Canary, n messages.CanaryCounts, reason string) {
	kctx, cancel := context.WithTimeout(ctx, b.cfg.StoreTimeout)
	defer cancel()
	e, err := b.modes.kv.Get(kctx, canaryKey)
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			b.m.NATSErrors.WithLabelValues("kv").Inc()
			b.log.Warn("canary: cannot read it to roll it back", "err", err)
		}
		return
	}
	var stored messages.Canary
	if json.Unmarshal(e.Value(), &stored) != nil || stored.ID != c.ID || stored.State != messages.CanaryActive {
		return
	}
	stored.State = messages.CanaryRolledBack
	stored.Rollback = &messages.CanaryRollback{At: time.Now().UTC(), Replica: b.cfg.Replica, Reason: reason, Counts: n}
	data, _ := json.Marshal(stored)
	if _, err := b.modes.kv.Update(kctx, canaryKey, data, e.Revision()); err != nil {
		// Another replica rolled it back (or changed it) first.
		b.log.Debug("canary: rollback lost the compare-and-set", "canary_id", c.ID, "err", err)
		return
	}
	b.modes.canary.apply(data, false, b.log)
	b.log.Warn("canary rolled back: the live policy decides every request again", "canary_id", c.ID,
		"policy_version", c.PolicyVersion, "reason", reason, "allow", n.Allow, "ask", n.Ask, "deny", n.Deny)
	b.auditCanary(ctx, &stored)
}

// auditCanary appends the rollback of c to the audit stream, on
// <prefix>.audit.canary.<id>, once (its Nats-Msg-Id), retrying within the
// tick's bounds.
func (b *Broker) auditCanary(ctx context.Context, c *messages.Canary) {
	if b.js == nil {
		return
	}
	data, _ := json.Marshal(messages.CanaryEvent{V: messages.Version, Event: messages.CanaryRolledBack, Canary: *c, Recorded: time.Now().UTC()})
	msg := &nats.Msg{Subject: b.out.Audit("canary." + c.ID), Data: data,
		Header: nats.Header{nats.MsgIdHdr: {"canary/" + c.ID + "/" + messages.CanaryRolledBack + "/" + b.cfg.Replica}}}
	for attempt := 0; attempt < 5; attempt++ {
		actx, cancel := context.WithTimeout(ctx, b.cfg.AuditAckTimeout)
		_, err := b.js.PublishMsg(actx, msg)
		cancel()
		if err == nil {
			return
		}
		b.log.Warn("canary: audit of the rollback failed; retrying", "canary_id", c.ID, "err", err)
		time.Sleep(100 * time.Millisecond)
	}
	b.log.Error("canary: the rollback is not in the audit stream (logged here only)", "canary_id", c.ID)
}

// canaryAdmin serves the canary ops (nil for other ops).
func (b *Broker) canaryAdmin(ctx context.Context, op string, req messages.AdminRequest) []byte {
	switch op {
	case messages.AdminOpSetCanary:
		return b.adminSetCanary(ctx, req.Canary)
	case messages.AdminOpClearCanary:
		return b.adminClearCanary(ctx)
	case messages.AdminOpCanaryStatus:
		return encode(messages.AdminReply{V: messages.Version, OK: true, Message: "canary status", Canary: b.canaryStatus()})
	}
	return nil
}

// canaryStatus is the canary as this replica knows it, with its window's
// counts over every replica.
func (b *Broker) canaryStatus() *messages.CanaryStatus {
	r := b.modes.canary.cur.Load()
	if r == nil {
		return &messages.CanaryStatus{}
	}
	c := *r.c
	c.Spec.Policy = "" // the file the operator gave; its version names it
	st := &messages.CanaryStatus{Canary: &c}
	if c.State == messages.CanaryActive {
		n := b.modes.canary.totals(r.c, b.canaryCountKey(), time.Now())
		st.Counts = &n
	}
	return st
}

// adminSetCanary stores a new canary in the modes bucket, which every
// replica follows. A candidate that does not parse is refused with its
// line-precise error and changes nothing.
func (b *Broker) adminSetCanary(ctx context.Context, spec *messages.CanarySpec) []byte {
	if b.modes.kv == nil {
		return encodeError(messages.CodeUnavailable, "a canary needs JetStream (the broker runs with the audit stream disabled)")
	}
	p, err := policy.Parse([]byte(spec.Policy), canaryFile)
	if err != nil {
		b.m.BadMessages.WithLabelValues(string(messages.CodeInvalidRequest)).Inc()
		return encodeError(messages.CodeInvalidRequest, "canary policy: "+err.Error())
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	c := messages.Canary{Spec: *spec, ID: hex.EncodeToString(id), PolicyVersion: p.Version(),
		LiveVersion: b.cfg.Policy.Current().Version(), SetAt: time.Now().UTC(), State: messages.CanaryActive}
	data, _ := json.Marshal(c)
	if _, err := b.modes.kv.Put(ctx, canaryKey, data); err != nil {
		b.m.NATSErrors.WithLabelValues("kv").Inc()
		return encodeError(messages.CodeUnavailable, "cannot store the canary: "+err.Error())
	}
	// This replica follows it at once (the others through their watch,
	// within milliseconds): a status asked of it next sees the canary.
	b.modes.canary.apply(data, false, b.log)
	msg := fmt.Sprintf("canary %s of policy %s set on every replica (live %s)", c.ID, c.PolicyVersion, c.LiveVersion)
	b.log.Info("admin: "+msg, "canary_id", c.ID)
	c.Spec.Policy = ""
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: msg, Canary: &messages.CanaryStatus{Canary: &c}})
}

// adminClearCanary deletes the canary (active or rolled back).
func (b *Broker) adminClearCanary(ctx context.Context) []byte {
	if b.modes.kv == nil {
		return encodeError(messages.CodeUnavailable, "a canary needs JetStream (the broker runs with the audit stream disabled)")
	}
	if err := b.modes.kv.Delete(ctx, canaryKey); err != nil {
		b.m.NATSErrors.WithLabelValues("kv").Inc()
		return encodeError(messages.CodeUnavailable, "cannot clear the canary: "+err.Error())
	}
	b.modes.canary.apply(nil, true, b.log)
	b.log.Info("admin: canary cleared on every replica")
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: "canary cleared on every replica"})
}

// isCanaryKey reports whether a modes bucket key is the canary's.
func isCanaryKey(key string) bool { return strings.HasPrefix(key, "canary.") }
