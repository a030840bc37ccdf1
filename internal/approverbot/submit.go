package approverbot

import (
	"context"
	"log/slog"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// SubmitTimeout bounds one answer's round trip to the brokers.
const SubmitTimeout = 30 * time.Second

// Submission is what came of an answer a channel submitted, for the person who
// gave it.
type Submission struct {
	// Text tells them: "Done: ✓ approved (once) by Alice via slack.",
	// "Not applied: …", "Not sent: …".
	Text string
	// Applied: the brokers applied it (a decision, or a counted vote).
	Applied bool
	// Settled is set when the brokers said the question was already
	// settled: the channel shows it settled (the resolution may never
	// have reached this bot).
	Settled *messages.Resolved
}

// Submit turns a choice on q into its answer ([Choose]) and sends it
// through r, within [SubmitTimeout]; it logs the result on log and says
// what to tell the person. The one path from a channel's control to the
// brokers: channels only show Submission.Text and, when Settled is set, the
// settled question.
func Submit(ctx context.Context, r Responder, log *slog.Logger, q Question, c Choice, approver, channel, device, feedback string) Submission {
	a, err := Choose(q, c, approver, channel, device, feedback)
	if err != nil {
		log.Warn("answer refused", "request_id", q.Request.RequestID, "approver", approver, "err", err)
		return Submission{Text: NotSentText(err)}
	}
	return send(ctx, r, log, q, a)
}

// send is the round trip of an answer a on q to the brokers, for [Submit],
// [SubmitAnswer] and [SubmitEdited]: the one send path.
func send(ctx context.Context, r Responder, log *slog.Logger, q Question, a Answer) Submission {
	ctx, cancel := context.WithTimeout(ctx, SubmitTimeout)
	defer cancel()
	rep, err := r.Respond(ctx, a)
	if err != nil {
		log.Warn("answer not sent", "request_id", q.Request.RequestID, "approver", a.Approver, "err", err)
		return Submission{Text: NotSentText(err)}
	}
	log.Info("answer sent", "request_id", q.Request.RequestID, "approver", a.Approver, "applied", rep.Applied, "state", rep.State)
	o := Submission{Text: ReplyText(rep), Applied: rep.Applied}
	if !rep.Applied && rep.Decision != nil && rep.State.Final() {
		o.Settled = &messages.Resolved{V: messages.Version, Type: "resolved", RequestID: q.Request.RequestID,
			SessionID: q.Request.SessionID, Team: q.Team, State: rep.State, Decision: *rep.Decision}
	}
	return o
}
