package admincli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/replay"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// auditFilter selects audit records.
type auditFilter struct {
	session, agent, tool, outcome string
	since, until                  time.Time
	// tenants says whose subjects are read (--tenant, --all-tenants).
	tenants replay.Tenants
}

// auditEntry is one record read, with the tenant account whose subject
// held it ("" for the plain subjects).
type auditEntry struct {
	tenant string
	rec    messages.AuditRecord
}

func (f *auditFilter) match(r *messages.AuditRecord) bool {
	switch {
	case f.agent != "" && r.Request.AgentID != f.agent,
		f.tool != "" && !strings.EqualFold(r.Request.Tool, f.tool),
		f.outcome != "" && string(r.Decision.Outcome) != f.outcome && string(r.Decision.ReasonCode) != f.outcome,
		!f.until.IsZero() && r.Recorded.After(f.until):
		return false
	}
	return true
}

func runAudit(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("audit", "[flags]",
		"Searches the audit stream "+messages.AuditStream+" (decisions), oldest first; --follow keeps\n"+
			"printing new records until interrupted. Reading the stream needs its NATS permissions.\n"+
			"On a tenant plane a tenant's records are on its own subjects: --tenant ACCOUNT reads\n"+
			"them, --all-tenants every tenant's and the plain ones (with a tenant column).", out, errw)
	var f auditFilter
	var since, until time.Duration
	limit := 100
	follow := false
	e.fs.StringVar(&f.session, "session", "", "only this session (read from its own subject)")
	e.fs.StringVar(&f.agent, "agent", "", "only this agent id")
	e.fs.StringVar(&f.tool, "tool", "", "only this tool (case-insensitive)")
	e.fs.StringVar(&f.outcome, "outcome", "", "only this outcome (allow, deny) or reason code (hard_stop, timeout…)")
	e.fs.DurationVar(&since, "since", time.Hour, "records of this long ago and later")
	e.fs.DurationVar(&until, "until", 0, "only records older than this long ago (0: up to now)")
	e.fs.IntVar(&limit, "limit", limit, "print at most the last `n` matching records (without --follow)")
	e.fs.BoolVar(&follow, "follow", false, "keep printing new records (tail)")
	f.tenants.Bind(e.fs)
	check := func() bool {
		switch {
		case !e.noArgs():
			return false
		case since <= 0 || until < 0 || (until > 0 && until >= since):
			return e.usageErr("--since must be positive and longer ago than --until")
		case limit < 1:
			return e.usageErr("--limit must be at least 1")
		case f.outcome != "" && f.outcome != "allow" && f.outcome != "deny" && !knownReason(f.outcome):
			return e.usageErr("--outcome %q: want allow, deny or a reason code", f.outcome)
		case f.session != "" && messages.ValidateToken("--session", f.session) != nil:
			return e.usageErr("%v", messages.ValidateToken("--session", f.session))
		case f.tenants.Validate() != nil:
			return e.usageErr("%v", f.tenants.Validate())
		}
		return true
	}
	if code := e.start(ctx, args, check); code >= 0 {
		return code
	}
	defer e.close()
	now := time.Now()
	f.since = now.Add(-since)
	if until > 0 {
		f.until = now.Add(-until)
	}
	recs, oe := e.readAudit(ctx, &f, limit, follow)
	if oe != nil {
		return e.fail(oe)
	}
	return e.emitAudit(recs, &f)
}

// readAudit reads the records f selects: up to the stream's end (the last
// limit of them), or — following — every one until ctx ends, printed as
// they come.
func (e *env) readAudit(ctx context.Context, f *auditFilter, limit int, follow bool) ([]auditEntry, *opError) {
	js, err := jetstream.New(e.nc)
	if err != nil {
		return nil, &opError{ExitFailed, err.Error()}
	}
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	cons, err := js.OrderedConsumer(cctx, messages.AuditStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: f.tenants.Subjects(e.subj, f.session), DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &f.since,
	})
	cancel()
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, &opError{ExitNotFound, "no audit stream " + messages.AuditStream + " (the brokers run with the audit disabled?)"}
	}
	if err != nil {
		return nil, &opError{ExitNoBroker, "open the audit stream: " + err.Error()}
	}
	var recs []auditEntry
	seen := messages.NewRecentRecords(recentRecords)
	for {
		wait := time.Second
		if follow {
			wait = 5 * time.Second
		}
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(wait))
		if err != nil {
			return nil, &opError{ExitNoBroker, "read the audit stream: " + err.Error()}
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			// Grant, breaker and person events hold no decision's
			// record; a message of no shape this reader knows neither.
			rs, _ := messages.AuditRecords(msg.Data())
			for _, r := range rs {
				if r.Request.RequestID == "" || !f.match(&r) || seen.Seen(messages.AuditRecordID(&r)) {
					continue
				}
				ent := auditEntry{tenant: replay.TenantOf(e.subj, msg.Subject()), rec: r}
				if follow {
					e.emitAudit([]auditEntry{ent}, f)
					continue
				}
				recs = append(recs, ent)
				if len(recs) > limit {
					recs = recs[1:]
				}
			}
		}
		if ctx.Err() != nil || (!follow && n == 0) {
			return recs, nil
		}
		if !follow {
			if info, err := cons.Info(ctx); err == nil && info.NumPending == 0 {
				return recs, nil
			}
		}
	}
}

// emitAudit prints recs: JSON lines (a tenant's record with its account
// in "tenant"), or a table (with a tenant column when f reads tenants).
func (e *env) emitAudit(recs []auditEntry, f *auditFilter) int {
	if e.json {
		for _, ent := range recs {
			data, _ := json.Marshal(ent.rec)
			if ent.tenant != "" {
				account, _ := json.Marshal(ent.tenant)
				data = append(append([]byte(`{"tenant":`), account...), append([]byte{','}, data[1:]...)...)
			}
			fmt.Fprintln(e.out, string(data))
		}
		return ExitOK
	}
	tenants := f.tenants.All || f.tenants.Account != ""
	return e.emit(nil, func(w io.Writer) {
		for _, ent := range recs {
			r := &ent.rec
			cols := []string{when(r.Recorded), r.Request.RequestID, r.Request.SessionID, r.Request.AgentID, r.Request.Tool,
				string(r.Decision.Outcome), string(r.Decision.ReasonCode), r.Decision.Reason}
			if tenants {
				cols = append([]string{ent.tenant}, cols...)
			}
			row(w, cols...)
		}
	})
}

// knownReason reports whether s is a reason code a decision carries.
func knownReason(s string) bool {
	_, known := messages.ReasonCode(s).Outcome()
	return known
}

// recentRecords bounds the record ids --follow remembers: copies of one
// decision are appended seconds apart.
const recentRecords = 1 << 16
