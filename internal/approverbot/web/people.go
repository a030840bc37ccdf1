package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// personRecorder is the part of the bot that sends a person's event to the
// brokers' audit ([approverbot.Bot.RecordPerson]).
type personRecorder interface {
	RecordPerson(ctx context.Context, e messages.PersonEvent) error
}

// recordTimeout bounds the wait for the brokers' receipt of a person's
// event: a sign-in does not hang on an unreachable plane.
const recordTimeout = 3 * time.Second

// recordPerson records what a person did on the page (a sign-in, a failed
// one, a sign-out, a step-up, an authenticator added or removed): who, from
// where (the client's address, see trusted_proxies, and User-Agent), when,
// and how; in the bot's log and, through the bot, in the brokers' audit
// stream beside the decisions. approver is the id (or the id tried); method
// is password, oidc, proxy or webauthn. A record the brokers could not take
// is logged as an error and does not stop what the person did.
func (c *Channel) recordPerson(r *http.Request, kind messages.PersonEventKind, approver, method, detail string) {
	e := messages.PersonEvent{V: messages.Version, Kind: kind, Approver: cleanLine(approver, messages.MaxIDBytes),
		Channel: Name, Method: method, Remote: c.clientAddr(r), UserAgent: cleanLine(r.UserAgent(), 256),
		Detail: cleanLine(detail, 512), At: c.now().UTC()}
	level := slog.LevelInfo
	if kind == messages.PersonSignInFailed || kind == messages.PersonStepUpFailed {
		level = slog.LevelWarn
	}
	c.log.Log(r.Context(), level, "web: "+string(kind), "approver", e.Approver, "method", method, "remote", e.Remote,
		"detail", e.Detail)
	rec, ok := c.responder().(personRecorder)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), recordTimeout)
	defer cancel()
	if err := rec.RecordPerson(ctx, e); err != nil {
		c.log.Error("web: the audit of people did not take a record", "kind", string(kind), "approver", e.Approver, "err", err)
	}
}
