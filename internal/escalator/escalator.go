package escalator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/pkg/claim"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// drainTimeout is how long steps already claimed may run on once Run's
// context ends.
const drainTimeout = 5 * time.Second

// Escalator claims due escalation steps and runs them. Run one per broker
// replica. It is a [claim.Loop] over the store's ClaimSteps.
type Escalator struct {
	cfg  Config
	log  *slog.Logger
	loop *claim.Loop[session.Step]
}

// New checks cfg (after defaults) and returns an escalator ready to Run.
func New(cfg Config) (*Escalator, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, n := range cfg.Pagers.Names() {
		cfg.Metrics.initPager(n)
	}
	e := &Escalator{cfg: cfg, log: cfg.Logger.With("component", "escalator")}
	loop, err := claim.New(claim.Config[session.Step]{
		Name:     "escalator",
		Claim:    cfg.Store.ClaimSteps,
		Handle:   e.run,
		Interval: cfg.Interval,
		Jitter:   cfg.Interval / 4,
		Batch:    cfg.Batch,
		// A claimed step never waits for a worker while its lease runs.
		Concurrency:   cfg.Concurrency,
		Hold:          cfg.Concurrency,
		HandleTimeout: cfg.StepTimeout,
		DrainTimeout:  drainTimeout,
		Logger:        e.log,
	})
	if err != nil {
		return nil, err
	}
	e.loop = loop
	return e, nil
}

// Run sweeps at once, then every Interval (less up to a quarter, so that
// replicas do not sweep in lockstep), until ctx is done; a failed sweep is
// retried after a backoff up to the Interval. It returns once the steps it
// claimed have finished: each is bounded by StepTimeout, and by 5 s once
// ctx has ended (a step cut short runs again after its lease).
func (e *Escalator) Run(ctx context.Context) error { return e.loop.Run(ctx) }

// SweepOnce claims and runs every step due now and returns how many it
// ran; it waits for them.
func (e *Escalator) SweepOnce(ctx context.Context) (int, error) { return e.loop.SweepOnce(ctx) }

// run carries one step out and finishes it; a failure leaves it to be
// claimed again after its lease. A panic is logged, not propagated.
func (e *Escalator) run(ctx context.Context, st session.Step) {
	log := e.log.With("request_id", st.RequestID, "session_id", st.SessionID, "step", st.Index+1, "phase", string(st.Phase))
	defer func() {
		if p := recover(); p != nil {
			log.Error("escalator: step panicked", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	q, err := e.cfg.Asker.Question(st.Record)
	if err != nil {
		log.Error("escalator: the stored question is unreadable; the step is dropped", "err", err)
		e.finish(ctx, log, st, 0)
		return
	}
	if st.Index >= len(q.Escalation) {
		log.Error("escalator: the stored question has no such step; dropped", "steps", len(q.Escalation))
		e.finish(ctx, log, st, 0)
		return
	}
	step := q.Escalation[st.Index]
	kind := step.Kind()
	log = log.With("kind", kind)
	if st.Phase == session.StepResolve {
		e.resolve(ctx, log, st, step)
		return
	}
	var watch time.Duration
	switch kind {
	case messages.StepRemind:
		err = e.remind(st, q)
	case messages.StepAddTeam:
		err = e.addTeam(ctx, log, st, q, step.AddTeam)
	case messages.StepPage:
		watch, err = e.page(ctx, log, st, q, step.Page)
	default:
		err = errDrop{fmt.Errorf("step %d does not do exactly one thing", st.Index+1)}
	}
	var drop errDrop
	switch {
	case errors.As(err, &drop):
		e.cfg.Metrics.Steps.WithLabelValues(kind, "dropped").Inc()
		log.Warn("escalator: step dropped", "err", drop.err)
		e.finish(ctx, log, st, 0)
	case err != nil:
		e.cfg.Metrics.Steps.WithLabelValues(kind, "error").Inc()
		log.Warn("escalator: step failed; it runs again after its lease", "err", err)
	default:
		e.cfg.Metrics.Steps.WithLabelValues(kind, "done").Inc()
		log.Info("escalation step ran", "target", step.Target(), "team", strings.Join(st.Record.Teams, ","), "tool", st.Record.Tool)
		e.finish(ctx, log, st, watch)
	}
}

// errDrop marks a step that cannot run and will not run again.
type errDrop struct{ err error }

func (d errDrop) Error() string { return d.err.Error() }

func (e *Escalator) finish(ctx context.Context, log *slog.Logger, st session.Step, watch time.Duration) {
	if err := e.cfg.Store.FinishStep(ctx, st, watch); err != nil {
		log.Warn("escalator: could not finish a step; it runs again after its lease (its effects are idempotent)", "err", err)
	}
}

// remind asks the question's teams again, marked as a reminder.
func (e *Escalator) remind(st session.Step, q messages.ApprovalNeeded) error {
	n := 0
	for _, s := range q.Escalation[:st.Index+1] {
		if s.Remind {
			n++
		}
	}
	q.Reminder, q.EscalationStep = n, st.Index+1
	q.ApprovalsSoFar = st.Record.Approvals
	var errs []error
	for _, team := range st.Record.Teams {
		q.Team = team
		errs = append(errs, e.cfg.Asker.Ask(team, q))
	}
	return errors.Join(errs...)
}

// addTeam routes the question to team as well and asks it there.
func (e *Escalator) addTeam(ctx context.Context, log *slog.Logger, st session.Step, q messages.ApprovalNeeded, team string) error {
	res, err := e.cfg.Store.AddTeam(ctx, st.SessionID, st.RequestID, team)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return errDrop{err}
	case err != nil:
		return err
	case res.Refusal != nil:
		return errDrop{fmt.Errorf("the request settled first: %w", res.Refusal)}
	}
	if res.Applied {
		log.Info("team added to the question", "team", team)
	}
	q.EscalationStep = st.Index + 1
	q.ApprovalsSoFar = res.Record.Approvals
	q.Team = team
	return e.cfg.Asker.Ask(team, q)
}

// page triggers the named pager and returns the watch that resolves the
// page once the request settles.
func (e *Escalator) page(ctx context.Context, log *slog.Logger, st session.Step, q messages.ApprovalNeeded, name string) (time.Duration, error) {
	p, _, ok := e.cfg.Pagers.get(name)
	if !ok {
		e.cfg.Metrics.Pages.WithLabelValues(name, "trigger", "rejected").Inc()
		return 0, errDrop{fmt.Errorf("pager %q is not configured on this broker", name)}
	}
	ref, err := p.Trigger(ctx, e.pageOf(st, q))
	switch {
	case errors.Is(err, pager.ErrInvalidPage) || errors.Is(err, pager.ErrRejected):
		e.cfg.Metrics.Pages.WithLabelValues(name, "trigger", "rejected").Inc()
		return 0, errDrop{err}
	case err != nil:
		e.cfg.Metrics.Pages.WithLabelValues(name, "trigger", "error").Inc()
		return 0, err
	}
	e.cfg.Metrics.Pages.WithLabelValues(name, "trigger", "ok").Inc()
	log.Info("paged", "pager", name, "dedup_key", ref.DedupKey)
	return e.cfg.Watch, nil
}

// resolve resolves the page of a page step whose request settled.
func (e *Escalator) resolve(ctx context.Context, log *slog.Logger, st session.Step, step messages.EscalationStep) {
	p, prefix, ok := e.cfg.Pagers.get(step.Page)
	if !ok {
		e.cfg.Metrics.Pages.WithLabelValues(step.Page, "resolve", "rejected").Inc()
		log.Error("escalator: cannot resolve a page: the pager is no longer configured", "pager", step.Page)
		e.finish(ctx, log, st, 0)
		return
	}
	err := p.Resolve(ctx, pager.DedupKey(prefix, st.SessionID, st.RequestID))
	switch {
	case errors.Is(err, pager.ErrRejected):
		e.cfg.Metrics.Pages.WithLabelValues(step.Page, "resolve", "rejected").Inc()
		log.Error("escalator: the pager refused to resolve the page; given up", "pager", step.Page, "err", err)
	case err != nil:
		e.cfg.Metrics.Pages.WithLabelValues(step.Page, "resolve", "error").Inc()
		log.Warn("escalator: resolving a page failed; retried after the lease", "pager", step.Page, "err", err)
		return
	default:
		e.cfg.Metrics.Pages.WithLabelValues(step.Page, "resolve", "ok").Inc()
		log.Info("page resolved", "pager", step.Page, "state", string(st.Record.State))
	}
	e.finish(ctx, log, st, 0)
}

// pageOf describes the question for a pager.
func (e *Escalator) pageOf(st session.Step, q messages.ApprovalNeeded) pager.Page {
	rec := st.Record
	what := callSummary(q)
	team := strings.Join(rec.Teams, ", ")
	desc := fmt.Sprintf("%s asks to run %s.\nWaiting since %s for team %s (%d of %d approvals); the question expires at %s.",
		cmpOr(q.Request.AgentID, rec.AgentID), what, rec.CreatedAt.UTC().Format(time.RFC3339), team,
		len(rec.Approvals), rec.ApprovalsRequired, rec.ExpiresAt.UTC().Format(time.RFC3339))
	if q.Risk.Reason != "" {
		desc += "\nWhy it asks: " + q.Risk.Reason
	}
	return pager.Page{
		RequestID:   rec.ID,
		Summary:     fmt.Sprintf("Approval needed: %s (team %s)", what, team),
		Description: desc,
		Link:        Link(e.cfg.WebURL, rec.ID),
		Team:        team,
		Tool:        rec.Tool,
		SessionID:   rec.SessionID,
		Details:     map[string]string{"agent_id": rec.AgentID, "requested_by": rec.RequestedBy, "expires_at": rec.ExpiresAt.UTC().Format(time.RFC3339)},
		Time:        rec.CreatedAt,
	}
}

// callSummary is the tool and, for a call the brokers judged as a shell
// call, its command, on one line. Any other tool's arguments are named by
// key only, none promoted: which one the tool acts on is its own schema's
// business (red team AG F1: a decoy "command" on an MCP tool that runs
// "sql").
func callSummary(q messages.ApprovalNeeded) string {
	tool := q.Request.Tool
	var args map[string]json.RawMessage
	if json.Unmarshal(q.Request.Arguments, &args) != nil || len(args) == 0 {
		return tool
	}
	if q.Risk.Shell {
		var c string
		if json.Unmarshal(args["command"], &c) == nil && c != "" {
			return tool + " " + c
		}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], fmt.Sprintf("and %d more", len(keys)-8))
	}
	return tool + " (arguments " + strings.Join(keys, ", ") + ": see the question)"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
