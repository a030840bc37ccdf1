package approverbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
)

// Bot connects channels to the plane. Create it with [New], then Run.
type Bot struct {
	cfg      *Config
	nc       *nats.Conn
	subj     messages.Subjects
	log      *slog.Logger
	channels []Channel
	board    *board
	signer   Signer
	tracer   trace.Tracer // nil: no spans

	pumps   map[string]*pump
	replayc chan struct{}
	metrics *Metrics
	// retryEvery is how often a failed pending replay is retried.
	retryEvery time.Duration

	// health is what readiness needs to know of the bot's NATS traffic.
	healthMu sync.Mutex
	refused  map[string]string // subjects the server refused, with its error
	replayed map[string]error  // each team's latest pending replay (nil: it succeeded)
}

// Signer signs responses (the bot's nkey, DESIGN §3 "optional signature").
// nil: responses go unsigned.
type Signer interface {
	Sign(resp *messages.Response) error
}

// Options are the optional parts of a bot.
type Options struct {
	Logger *slog.Logger
	Signer Signer
	// Metrics receives the bot's metrics (default: a new registry).
	Metrics *Metrics
	// ReplayRetry is how often a failed pending replay is retried
	// (default 10 s).
	ReplayRetry time.Duration
	// Tracer makes a span of each response sent, in the trace of the
	// request that asked (the question's traceparent), and sends its
	// context to the brokers in the response's headers. Nil: no spans.
	Tracer trace.Tracer
}

// New returns a bot serving cfg's teams on nc with channels. The bot does
// not own nc; call [Bot.Reconnected] from nc's reconnect handler so that the
// bot replays what it missed.
func New(cfg *Config, nc *nats.Conn, channels []Channel, o Options) (*Bot, error) {
	if cfg == nil || nc == nil {
		return nil, errors.New("approverbot: config and NATS connection are required")
	}
	if len(channels) == 0 {
		return nil, errors.New("approverbot: no channels")
	}
	subj, err := messages.NewSubjects(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.ReplayRetry <= 0 {
		o.ReplayRetry = 10 * time.Second
	}
	b := &Bot{cfg: cfg, nc: nc, subj: subj, log: o.Logger, channels: channels, board: newBoard(),
		signer: o.Signer, tracer: o.Tracer, pumps: map[string]*pump{}, replayc: make(chan struct{}, 1), metrics: o.Metrics, retryEvery: o.ReplayRetry,
		refused: map[string]string{}, replayed: map[string]error{}}
	for _, ch := range channels {
		if _, dup := b.pumps[ch.Name()]; dup {
			return nil, fmt.Errorf("approverbot: channel %s configured twice", ch.Name())
		}
		b.pumps[ch.Name()] = newPump()
		b.metrics.initChannel(ch.Name())
	}
	for _, team := range cfg.Teams {
		b.replayed[team] = errors.New(notReplayedYet)
	}
	b.metrics.Ready.Set(0)
	if cfg.OpenNATS() {
		b.log.Warn(OpenPlaneText, "nats", cfg.NATS.URL)
	}
	return b, nil
}

// Metrics returns the bot's metrics.
func (b *Bot) Metrics() *Metrics { return b.metrics }

// Reconnected asks the bot to replay the open questions (after a NATS
// reconnect, questions and resolutions may have been missed). The client
// subscribes again: refusals seen before the reconnect are forgotten, and
// reported again if the server still refuses.
func (b *Bot) Reconnected() {
	b.healthMu.Lock()
	clear(b.refused)
	b.healthMu.Unlock()
	b.updateReady()
	select {
	case b.replayc <- struct{}{}:
	default:
	}
}

// Run serves until ctx is done.
func (b *Bot) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	for _, team := range b.cfg.Teams {
		s, err := b.nc.Subscribe(b.subj.Ask(team), func(m *nats.Msg) { b.onAsk(team, m) })
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", b.subj.Ask(team), err)
		}
		subs = append(subs, s)
		s, err = b.nc.Subscribe(b.subj.Resolved(team), b.onResolved)
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", b.subj.Resolved(team), err)
		}
		subs = append(subs, s)
	}
	if err := b.nc.Flush(); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}

	var wg sync.WaitGroup
	errc := make(chan error, len(b.channels))
	for _, ch := range b.channels {
		p := b.pumps[ch.Name()]
		wg.Add(2)
		go func() { defer wg.Done(); p.run(ctx, ch, b.log, b.metrics) }()
		go func() {
			defer wg.Done()
			if err := ch.Run(ctx, b); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("channel %s: %w", ch.Name(), err)
			}
		}()
	}
	b.replay(ctx)
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	retry := time.NewTicker(b.retryEvery)
	defer retry.Stop()
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err = <-errc:
			cancel()
			break loop
		case <-b.replayc:
			b.replay(ctx)
		case <-retry.C:
			// A failed replay (brokers not up yet, a permission the
			// operator has since fixed) is retried until it succeeds.
			if b.replayFailed() {
				b.replay(ctx)
			}
		case <-tick.C:
			for _, q := range b.board.prune() {
				// Long past its expiry and no resolution seen: it was
				// missed; clear it on every channel.
				b.settle(messages.Resolved{V: messages.Version, Type: "resolved", RequestID: q.Request.RequestID,
					SessionID: q.Request.SessionID, Team: q.Team, State: messages.StateExpired,
					Decision: messages.Decision{Reason: "expired; its resolution was not received"}})
			}
		}
	}
	cancel()
	wg.Wait()
	return err
}

// onAsk takes a question published on team's subject. The team is the
// subject's, not the payload's: the digest does not cover the team (a
// question is announced once per team it is routed to), so a copy that
// names another team in its payload must not move the card to that
// team's approvers or out of sight of its own.
func (b *Bot) onAsk(team string, m *nats.Msg) {
	var q messages.ApprovalNeeded
	if err := json.Unmarshal(m.Data, &q); err != nil || q.Request.RequestID == "" {
		b.log.Warn("ignoring a garbled question", "subject", m.Subject, "err", err)
		return
	}
	if q.Team != team {
		b.log.Warn("a question names another team than the subject it came on; the subject's team stands",
			"request_id", q.Request.RequestID, "team", team, "payload_team", q.Team)
		q.Team = team
	}
	b.show(q)
}

func (b *Bot) show(q messages.ApprovalNeeded) {
	stored, changed, err := b.board.upsert(q)
	if err != nil {
		// Only the brokers publish questions, and they never change
		// one: someone else published this.
		b.log.Error("attack: refused a question that changes an open one; the card keeps what it showed",
			"request_id", q.Request.RequestID, "session_id", q.Request.SessionID, "team", q.Team, "tool", q.Request.Tool, "err", err)
		b.metrics.ChangedQuestions.Inc()
		return
	}
	if !changed {
		return
	}
	for _, p := range b.pumps {
		p.push(event{ask: &stored})
	}
}

func (b *Bot) onResolved(m *nats.Msg) {
	var r messages.Resolved
	if err := json.Unmarshal(m.Data, &r); err != nil || r.RequestID == "" {
		b.log.Warn("ignoring a garbled resolution", "subject", m.Subject, "err", err)
		return
	}
	b.settle(r)
}

func (b *Bot) settle(r messages.Resolved) {
	if _, wasOpen := b.board.resolve(r); !wasOpen {
		return
	}
	for _, p := range b.pumps {
		p.push(event{resolved: &r})
	}
}

// replay asks the brokers for each team's open questions: new ones are
// shown; open ones the brokers no longer list were settled while this bot
// was away and are cleared, unless their resolution arrives first.
func (b *Bot) replay(ctx context.Context) {
	for _, team := range b.cfg.Teams {
		data, _ := json.Marshal(messages.PendingRequest{V: messages.Version})
		// Questions first seen after this instant may be missing from the
		// reply (announced while the brokers built it): they stay open.
		asked := b.board.now()
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := b.nc.RequestWithContext(rctx, b.subj.Pending(team), data)
		cancel()
		if ctx.Err() != nil {
			return // shutting down: not a failure
		}
		if err != nil {
			b.replayDone(team, fmt.Errorf("no broker answered the pending replay (%w); NATS permissions must let the bot publish on %s and subscribe to its reply inbox (nats.inbox_prefix)", err, b.subj.Pending(team)))
			continue
		}
		if e, ok := messages.IsErrorReply(msg.Data); ok {
			b.replayDone(team, fmt.Errorf("the brokers refused the pending replay: %s: %s", e.Error.Code, e.Error.Message))
			continue
		}
		var rep messages.PendingReply
		if err := json.Unmarshal(msg.Data, &rep); err != nil {
			b.replayDone(team, fmt.Errorf("garbled pending replay: %w", err))
			continue
		}
		b.replayDone(team, nil)
		listed := map[string]bool{}
		for _, q := range rep.Questions {
			listed[q.Request.RequestID] = true
			b.show(q)
		}
		var gone []messages.Resolved
		for id := range b.board.openIDs(team) {
			if listed[id] {
				continue
			}
			q, _ := b.board.get(id)
			if !q.Seen.Before(asked) {
				continue
			}
			gone = append(gone, messages.Resolved{V: messages.Version, Type: "resolved", RequestID: id, SessionID: q.Request.SessionID, Team: team,
				Decision: messages.Decision{Reason: "settled while this bot was disconnected"}})
		}
		b.settleUnlisted(ctx, gone)
	}
}

// unlistedGrace is how long a question the brokers no longer list stays
// open before the bot clears it: it may have been settled just now, its
// resolution (who decided) on its way on another subject than the reply.
const unlistedGrace = 2 * time.Second

// settleUnlisted clears the questions of gone after unlistedGrace, those
// whose resolution has not arrived meanwhile (settle passes over a
// question already settled).
func (b *Bot) settleUnlisted(ctx context.Context, gone []messages.Resolved) {
	if len(gone) == 0 {
		return
	}
	time.AfterFunc(unlistedGrace, func() {
		if ctx.Err() != nil {
			return
		}
		for _, r := range gone {
			b.settle(r)
		}
	})
}

// Answer is a human's answer from a channel.
type Answer struct {
	RequestID string
	// Approver is the approver id the channel resolved (see
	// Responder.Approver); Channel and Device say where they answered.
	Approver string
	Channel  string
	Device   string
	// Choice is what they picked; [Choose] fills the fields below from
	// it. An answer built by hand (Choice empty) is read from them.
	Choice     Choice
	Approved   bool
	Scope      messages.Scope
	RejectMode messages.RejectMode
	Feedback   string
	// Answer is the answer to an ask-user question (approvals only; see
	// [ChooseAnswer]).
	Answer json.RawMessage
	// UpdatedArguments approve the call with changes: a JSON object
	// (approvals only; see [ChooseEdited]). Never with Answer: an
	// ask-user question offers no editing.
	UpdatedArguments string
	// StepUp is the second factor the channel verified for this approval
	// (the web page's WebAuthn assertion); required to approve a question
	// that needs step-up, and refused on any other.
	StepUp *messages.StepUp
	// Digest, when set, is the digest of the question the channel's own
	// client showed (the webhook's system names the digest of the event it
	// got): an answer naming another than the open question's is refused
	// and not sent, since its approver saw something else. Empty for
	// channels that show the bot's own card; the response always names
	// that card's digest either way.
	Digest string
	// Identity, when set, is a person the channel signed in itself (web
	// OIDC sign-in) rather than one of the config's approvers: their
	// display name, the teams they answer here and the groups the bot
	// vouches for in the signed response.
	Identity *Identity
}

// Identity is a person a channel signed in with an identity provider.
type Identity struct {
	Display string
	// Teams are the bot's teams whose questions they see and answer.
	Teams []string
	// Groups are the provider's groups the bot states for them
	// (messages.Approver.Groups): those the bot's config maps to a team.
	Groups []string
}

// ErrUnknownQuestion: the answer names a question this bot does not know.
var ErrUnknownQuestion = errors.New("unknown question (never shown here, or settled long ago)")

// ErrUnknownApprover: the answering user maps to no approver.
var ErrUnknownApprover = errors.New("you are not a configured approver")

// Respond implements [Responder].
func (b *Bot) Respond(ctx context.Context, a Answer) (messages.RespondReply, error) {
	rep, err := b.respond(ctx, a)
	result := ResultApplied
	var failed *respondFailure
	switch {
	case errors.As(err, &failed):
		result = ResultFailed
		b.metrics.NATSErrors.WithLabelValues(NATSRespond).Inc()
	case err != nil:
		result = ResultRefused
	case !rep.Applied:
		result = ResultNotApplied
	}
	b.metrics.Answers.WithLabelValues(a.Channel, result).Inc()
	return rep, err
}

// respondFailure: the answer went out but no reply came back, or the reply
// was not one: it may have been applied.
type respondFailure struct{ err error }

// IsUnconfirmed reports whether err says an answer went out without a
// reply (it may have been applied; the resolution will tell).
func IsUnconfirmed(err error) bool {
	var f *respondFailure
	return errors.As(err, &f)
}

func (e *respondFailure) Error() string { return e.err.Error() }
func (e *respondFailure) Unwrap() error { return e.err }

// answering returns who answers a: one of the config's approvers, or the
// person a channel signed in (a.Identity), and which teams they answer.
func (b *Bot) answering(a Answer) (ApproverConfig, func(team string) bool, error) {
	if a.Identity != nil && a.Approver != "" {
		return ApproverConfig{Display: a.Identity.Display, groups: a.Identity.Groups},
			func(team string) bool { return slices.Contains(a.Identity.Teams, team) }, nil
	}
	appr, ok := b.cfg.Approvers[a.Approver]
	if !ok || a.Identity != nil {
		return ApproverConfig{}, nil, fmt.Errorf("%w (%q)", ErrUnknownApprover, a.Approver)
	}
	return appr, func(team string) bool { return b.cfg.Sees(a.Approver, team) }, nil
}

// respond sends the brokers approver a.Approver's answer to the open
// question a.RequestID, once it passes the checks, and returns their reply.
// An answer to a settled question, or to another version of the question
// than the one open, is not sent: the reply says why.
func (b *Bot) respond(ctx context.Context, a Answer) (messages.RespondReply, error) {
	appr, sees, err := b.answering(a)
	if err != nil {
		return messages.RespondReply{}, err
	}
	q, ok := b.board.get(a.RequestID)
	if !ok {
		return messages.RespondReply{}, fmt.Errorf("%w: %s", ErrUnknownQuestion, a.RequestID)
	}
	if !q.Open() {
		r := q.Resolved
		return messages.RespondReply{V: messages.Version, Applied: false, State: r.State, Decision: &r.Decision,
			Reason: "already settled by " + DecidedBy(r.Decision)}, nil
	}
	if !q.AnyTeam(sees) {
		return messages.RespondReply{}, fmt.Errorf("%w: approver %s does not answer team %s's questions here (approvers.%s.teams)", ErrChoice, a.Approver, q.Team, a.Approver)
	}
	if shown := q.ShownDigest(); a.Digest != "" && a.Digest != shown {
		b.log.Warn("answer refused: it names another version of the question", "request_id", a.RequestID,
			"approver", a.Approver, "channel", a.Channel, "digest", a.Digest, "question_digest", shown)
		return messages.RespondReply{V: messages.Version, Applied: false, State: messages.StatePending,
			Reason: "the answer names digest " + a.Digest + ", and the open question's is " + shown +
				": it answers another version of the question than the one asked; nothing was sent"}, nil
	}
	a, err = checkAnswer(q, a)
	if err != nil {
		return messages.RespondReply{}, err
	}
	resp := response(q, a, appr)
	if err := resp.Validate(); err != nil {
		return messages.RespondReply{}, err
	}
	rep, err := b.sendResponse(ctx, &q, resp)
	if err != nil {
		return messages.RespondReply{}, err
	}
	b.log.Info("response sent", "request_id", a.RequestID, "approver", a.Approver, "channel", a.Channel,
		"approved", a.Approved, "applied", rep.Applied, "state", rep.State, "reason", rep.Reason)
	return rep, nil
}

// checkAnswer passes an answer to the open question q through the rules
// every channel's answer meets, whether it came through Choose or was
// built by hand: the choice, a step-up, an answer to the agent's question
// and edited arguments. It returns the answer with the approval, scope,
// reject mode and feedback the choice settles on.
func checkAnswer(q Question, a Answer) (Answer, error) {
	c := a.Choice
	if c == "" {
		c = ChoiceFromScope(a.Approved, a.Scope, a.RejectMode)
	}
	checked, err := choose(q, c, a.Approver, a.Channel, a.Device, a.Feedback, a.StepUp != nil)
	if err != nil {
		return Answer{}, err
	}
	if err := checkStepUp(q, checked.Approved, a.StepUp, time.Now()); err != nil {
		return Answer{}, err
	}
	a.Approved, a.Scope, a.RejectMode, a.Feedback = checked.Approved, checked.Scope, checked.RejectMode, checked.Feedback
	if err := checkAnswerField(q, a); err != nil {
		return Answer{}, err
	}
	if err := checkEdit(q, a.Approved, a.Approver, a.UpdatedArguments); err != nil {
		return Answer{}, err
	}
	return a, nil
}

// response builds the response to q that the checked answer a, given by
// appr, sends the brokers.
func response(q Question, a Answer, appr ApproverConfig) messages.Response {
	resp := messages.Response{
		V:              messages.Version,
		RequestID:      q.Request.RequestID,
		SessionID:      q.Request.SessionID,
		Approver:       messages.Approver{ID: a.Approver, Display: appr.Display, Channel: a.Channel, Device: a.Device},
		ApproverGroups: slices.Clone(appr.groups),
		Approved:       a.Approved,
		Feedback:       a.Feedback,
	}
	// The question this answer answers: the digest of what the card
	// showed, computed here and sent always — never echoed from the copy,
	// and never left out because the copy carried none. A copy someone
	// else published first (on a plane whose NATS lets them) is then
	// refused by the brokers, whose stored question has another digest.
	resp.Digest = q.ShownDigest()
	if a.Approved {
		resp.Scope, resp.Answer, resp.StepUp = a.Scope, a.Answer, a.StepUp
		if a.UpdatedArguments != "" {
			resp.UpdatedArguments = json.RawMessage(a.UpdatedArguments)
		}
	} else {
		resp.RejectMode = a.RejectMode
	}
	return resp
}

// sendResponse signs resp, when the bot signs, sends it to the brokers
// in the trace of q and returns their reply. After an error that
// [IsUnconfirmed] reports, the response may have been applied all the same.
func (b *Bot) sendResponse(ctx context.Context, q *Question, resp messages.Response) (messages.RespondReply, error) {
	if b.signer != nil {
		if err := b.signer.Sign(&resp); err != nil {
			return messages.RespondReply{}, fmt.Errorf("sign response: %w", err)
		}
	}
	data, err := json.Marshal(resp)
	if err != nil {
		return messages.RespondReply{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	send := &nats.Msg{Subject: b.subj.Respond(), Data: data}
	if b.tracer != nil {
		var span trace.Span
		rctx, span = b.responseSpan(rctx, q, &resp)
		defer span.End()
		natstrace.Inject(rctx, send)
	}
	msg, err := b.nc.RequestMsgWithContext(rctx, send)
	if err != nil {
		return messages.RespondReply{}, &respondFailure{fmt.Errorf("no broker answered: %w", err)}
	}
	if e, ok := messages.IsErrorReply(msg.Data); ok {
		return messages.RespondReply{}, e.Err()
	}
	var rep messages.RespondReply
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		return messages.RespondReply{}, &respondFailure{fmt.Errorf("bad broker reply: %w", err)}
	}
	return rep, nil
}

// Open implements [Responder].
func (b *Bot) Open() []Question { return b.board.open() }

// Lookup implements [Responder].
func (b *Bot) Lookup(id string) (Question, bool) { return b.board.get(id) }

// Approver implements [Responder]: the channel's kind maps its user to an
// approver id (its Recipient, or its first approver key, or the user is an
// approver id), and the id must be a configured approver.
func (b *Bot) Approver(channel, user string) (Approver, bool) {
	id, ok := Recipient(b.cfg, channel, user)
	if !ok {
		return Approver{}, false
	}
	a, ok := b.cfg.Approvers[id]
	if !ok {
		return Approver{}, false
	}
	return Approver{ID: id, Display: a.Display}, true
}

// Recipient maps a user of channel to an approver id of c, as the
// channel's kind says; false when the user maps to none.
func Recipient(c *Config, channel, user string) (string, bool) {
	k, ok := lookupKind(channel)
	if !ok {
		_, known := c.Approvers[user]
		return user, known && user != ""
	}
	if _, enabled := c.Channels[channel]; !enabled {
		return "", false
	}
	if k.Recipient != nil {
		return k.Recipient(c, c.Channels[channel], user)
	}
	var key ApproverKey
	for _, ak := range k.ApproverKeys {
		if ak.User {
			key = ak
		}
	}
	if key.Key == "" {
		_, known := c.Approvers[user]
		return user, known && user != ""
	}
	if user == "" {
		return "", false
	}
	want := user
	if key.Int {
		n, err := strconv.ParseInt(user, 10, 64)
		if err != nil {
			return "", false
		}
		want = strconv.FormatInt(n, 10)
	}
	for _, id := range sortedKeys(c.Approvers) {
		if v := c.Approvers[id].Keys[key.Key]; v != "" && v == want {
			return id, true
		}
	}
	return "", false
}

// NATSError takes an asynchronous error of the bot's NATS connection (its
// ErrorHandler): a permissions violation on a subscription or a publish
// makes the bot not ready until a reconnect and a new replay clear it.
func (b *Bot) NATSError(sub *nats.Subscription, err error) {
	if err == nil {
		return
	}
	if !errors.Is(err, nats.ErrPermissionViolation) {
		b.metrics.NATSErrors.WithLabelValues(NATSAsync).Inc()
		return
	}
	b.metrics.NATSErrors.WithLabelValues(NATSPermission).Inc()
	key := err.Error()
	if sub != nil {
		key = sub.Subject
	}
	b.healthMu.Lock()
	b.refused[key] = err.Error()
	b.healthMu.Unlock()
	b.updateReady()
}

// replayDone records the result of a team's pending replay. It logs a
// change (a new failure, a recovery), not every retry of the same one.
func (b *Bot) replayDone(team string, err error) {
	b.healthMu.Lock()
	prev, seen := b.replayed[team]
	b.replayed[team] = err
	b.healthMu.Unlock()
	wasFailing := seen && prev != nil && prev.Error() != notReplayedYet
	switch {
	case err != nil:
		b.metrics.NATSErrors.WithLabelValues(NATSReplay).Inc()
		if !wasFailing || prev.Error() != err.Error() {
			b.log.Warn("pending replay failed; retrying every "+b.retryEvery.String(), "team", team, "err", err)
		}
	case wasFailing:
		b.log.Info("pending replay succeeded again", "team", team)
	}
	b.updateReady()
}

// notReplayedYet is a team's replay state before the first replay.
const notReplayedYet = "not replayed yet"

// Ready reports whether the bot's NATS traffic works: no subscription or
// publish refused by the server, and every team's latest pending replay
// answered. (The connection's own state is the caller's to check.)
func (b *Bot) Ready() error {
	b.healthMu.Lock()
	defer b.healthMu.Unlock()
	var errs []error
	for _, s := range sortedKeys(b.refused) {
		errs = append(errs, fmt.Errorf("refused by the NATS server: %s", b.refused[s]))
	}
	for _, team := range sortedKeys(b.replayed) {
		if err := b.replayed[team]; err != nil {
			errs = append(errs, fmt.Errorf("team %s: %w", team, err))
		}
	}
	return errors.Join(errs...)
}

func (b *Bot) updateReady() {
	if b.Ready() == nil {
		b.metrics.Ready.Set(1)
	} else {
		b.metrics.Ready.Set(0)
	}
}

// RecordHealth sets a channel's health gauge from a health check.
func (b *Bot) RecordHealth(channel string, err error) {
	v := 1.0
	if err != nil {
		v = 0
	}
	b.metrics.ChannelUp.WithLabelValues(channel).Set(v)
}

// replayFailed reports whether some team's latest replay failed.
func (b *Bot) replayFailed() bool {
	b.healthMu.Lock()
	defer b.healthMu.Unlock()
	for _, err := range b.replayed {
		if err != nil {
			return true
		}
	}
	return false
}

// RecordPerson sends e (what a person did on a channel: a sign-in, a
// failed one, a step-up…) to the brokers, which append it to the audit
// stream beside the decisions (docs/PROTOCOL.md, "PersonEvent"). It
// returns once a broker confirmed it, or with why not.
func (b *Bot) RecordPerson(ctx context.Context, e messages.PersonEvent) error {
	e.V = messages.Version
	if err := e.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	msg, err := b.nc.RequestWithContext(ctx, b.subj.People(), data)
	if err != nil {
		return fmt.Errorf("record %s: %w", e.Kind, err)
	}
	if er, ok := messages.IsErrorReply(msg.Data); ok {
		return fmt.Errorf("record %s: %s: %s", e.Kind, er.Error.Code, er.Error.Message)
	}
	return nil
}

// SpanResponse is the name of the bot's span of a response it sends.
const SpanResponse = "signoff.approver.response"

// responseSpan starts the span of resp, the answer to q: a child of the
// span of the request that asked when the question carries its
// traceparent, so that question, response and decision read as one trace.
func (b *Bot) responseSpan(ctx context.Context, q *Question, resp *messages.Response) (context.Context, trace.Span) {
	ctx = natstrace.Parse(ctx, q.TraceParent)
	return b.tracer.Start(ctx, SpanResponse, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		attribute.String("signoff.request_id", resp.RequestID), attribute.String("signoff.session_id", resp.SessionID),
		attribute.String("signoff.approver", resp.Approver.ID), attribute.String("signoff.channel", resp.Approver.Channel),
		attribute.Bool("signoff.approved", resp.Approved)))
}
