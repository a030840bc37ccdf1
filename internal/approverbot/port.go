package approverbot

import (
	"context"
	"net/http"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Channel is one way of reaching humans. The bot calls Ask and Resolve from
// one goroutine per channel, in the order the events happened; Run serves the
// channel's own inputs (HTTP endpoints, polling, a terminal) until ctx ends.
type Channel interface {
	// Name is the channel's name in logs and in Approver.Channel
	// ("terminal", "web", "slack", "telegram", "webhook").
	Name() string
	// Run serves the channel until ctx is done, answering through r.
	Run(ctx context.Context, r Responder) error
	// Ask shows a new question, or updates one already shown (a quorum
	// approval was counted).
	Ask(ctx context.Context, q Question) error
	// Resolve shows that a question was settled (by whom, how) and takes
	// its buttons away.
	Resolve(ctx context.Context, r messages.Resolved) error
	// CheckHealth reports whether the channel can reach its service.
	CheckHealth(ctx context.Context) error
}

// Responder is what channels answer through. Safe for concurrent use.
type Responder interface {
	// Respond sends a human's answer to the brokers and returns their reply
	// (applied or not, and why). It refuses answers from users that map to
	// no approver, for questions the bot does not know, and with scopes the
	// question does not offer.
	Respond(ctx context.Context, a Answer) (messages.RespondReply, error)
	// Open lists the open questions, oldest first.
	Open() []Question
	// Lookup returns an open or recently settled question.
	Lookup(requestID string) (Question, bool)
	// Approver maps a channel's user id to an approver; false when the user
	// is unknown.
	Approver(channel, userID string) (Approver, bool)
}

// HTTPChannel is a channel that serves HTTP endpoints (the web page, Slack's
// interactions, the webhook) on the bot's shared listener.
type HTTPChannel interface {
	Channel
	// Register adds the channel's routes to mux; it is called once, before
	// Run.
	Register(mux *http.ServeMux)
}
