package approverbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// GrantAdmin lists and revokes standing grants for an approver. The bot
// implements it next to [Responder]; a channel that shows grants (the web
// page, the terminal) asserts its responder to it, and says grants are
// unavailable when it is not one. Safe for concurrent use.
type GrantAdmin interface {
	// Grants lists the grants of the teams approver is a member of and
	// may answer for through this bot, newest first (admin.list_grants
	// with By = approver and the bot's teams: the brokers decide
	// membership from the policy's teams).
	Grants(ctx context.Context, approver string) ([]messages.Grant, error)
	// RevokeGrant revokes grant id for approver (admin.revoke_grant with
	// By = approver) and returns the revoked grant. A grant Grants does
	// not list for approver, unknown or of another team, is
	// messages.ErrNotFound; the brokers refuse (messages.ErrForbidden)
	// unless approver is a member of one of the grant's teams.
	RevokeGrant(ctx context.Context, approver, id string) (messages.Grant, error)
}

var _ GrantAdmin = (*Bot)(nil)

// ErrGrantsUnavailable: the channel's responder lists no grants (it is not
// the bot).
var ErrGrantsUnavailable = errors.New("grants cannot be listed or revoked here")

// adminTimeout bounds one admin request to the brokers.
const adminTimeout = 10 * time.Second

// maxGrantID bounds a grant id an approver types or sends: longer ones
// cannot be right.
const maxGrantID = 200

// Grants implements [GrantAdmin].
func (b *Bot) Grants(ctx context.Context, approver string) ([]messages.Grant, error) {
	if _, ok := b.cfg.Approvers[approver]; !ok || approver == "" {
		return nil, fmt.Errorf("%w (%q)", ErrUnknownApprover, approver)
	}
	teams := b.grantTeams(approver)
	if len(teams) == 0 {
		return nil, nil
	}
	rep, err := b.admin(ctx, messages.AdminOpListGrants, messages.AdminRequest{By: approver, Teams: teams})
	if err != nil {
		return nil, err
	}
	gs := slices.Clone(rep.Grants)
	slices.SortStableFunc(gs, func(a, b messages.Grant) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return gs, nil
}

// grantTeams are the teams whose grants approver lists and revokes through
// this bot: the teams the bot serves that approvers.<id>.teams lets them
// see ([Config.Sees]), as for questions. The brokers narrow them further
// to the teams the policy makes approver a member of.
func (b *Bot) grantTeams(approver string) []string {
	var teams []string
	for _, t := range b.cfg.Teams {
		if b.cfg.Sees(approver, t) {
			teams = append(teams, t)
		}
	}
	return teams
}

// RevokeGrant implements [GrantAdmin].
func (b *Bot) RevokeGrant(ctx context.Context, approver, id string) (messages.Grant, error) {
	if _, ok := b.cfg.Approvers[approver]; !ok || approver == "" {
		return messages.Grant{}, fmt.Errorf("%w (%q)", ErrUnknownApprover, approver)
	}
	if err := CheckGrantID(id); err != nil {
		return messages.Grant{}, err
	}
	// The brokers check the policy's membership; this bot's own limit
	// (the teams it serves, approvers.<id>.teams) is checked here, on the
	// grant's teams as the brokers list them.
	mine, err := b.Grants(ctx, approver)
	if err != nil {
		return messages.Grant{}, err
	}
	if !slices.ContainsFunc(mine, func(g messages.Grant) bool { return g.ID == id }) {
		return messages.Grant{}, fmt.Errorf("%w: no grant %s among the grants of the teams %s may answer for through this bot (%s)",
			messages.ErrNotFound, id, approver, strings.Join(b.grantTeams(approver), ", "))
	}
	rep, err := b.admin(ctx, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: id, By: approver})
	if err != nil {
		return messages.Grant{}, err
	}
	if rep.Grant == nil {
		return messages.Grant{}, &respondFailure{fmt.Errorf("the brokers revoked grant %s but did not say which: %s", id, rep.Message)}
	}
	b.log.Info("grant revoked", "grant_id", id, "approver", approver, "tool", rep.Grant.Tool,
		"session_id", rep.Grant.SessionID, "agent_id", rep.Grant.AgentID)
	return *rep.Grant, nil
}

// CheckGrantID refuses a grant id that cannot be one (empty, too long,
// white space or control characters), before anything is sent.
func CheckGrantID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: a grant id is required", messages.ErrInvalid)
	case len(id) > maxGrantID:
		return fmt.Errorf("%w: grant id too long (%d bytes, at most %d)", messages.ErrInvalid, len(id), maxGrantID)
	case strings.IndexFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '.' || r == '*' || r == '>' }) >= 0:
		return fmt.Errorf("%w: grant id %q holds white space, a control character, '.', '*' or '>' (ids look like gr_3kq7x2mz9d4vbn8c)", messages.ErrInvalid, card.Clip(id, 40))
	}
	return nil
}

// admin sends one admin request and reads its reply. An error reply
// becomes its sentinel ([messages.ErrForbidden], [messages.ErrNotFound]…)
// with the brokers' message; no reply is an unconfirmed failure
// ([IsUnconfirmed]).
func (b *Bot) admin(ctx context.Context, op string, req messages.AdminRequest) (messages.AdminReply, error) {
	req.V = messages.Version
	data, err := json.Marshal(req)
	if err != nil {
		return messages.AdminReply{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	subject := b.subj.Admin(op)
	msg, err := b.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		b.metrics.NATSErrors.WithLabelValues(NATSAdmin).Inc()
		return messages.AdminReply{}, &respondFailure{fmt.Errorf("no broker answered %s (%w); NATS permissions must let the bot publish on it", subject, err)}
	}
	if e, ok := messages.IsErrorReply(msg.Data); ok {
		return messages.AdminReply{}, e.Err()
	}
	var rep messages.AdminReply
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		return messages.AdminReply{}, &respondFailure{fmt.Errorf("bad broker reply to %s: %w", op, err)}
	}
	if !rep.OK {
		msg := rep.Message
		if msg == "" {
			msg = "no reason given"
		}
		return messages.AdminReply{}, fmt.Errorf("the brokers refused %s: %s", op, msg)
	}
	return rep, nil
}

// CleanGrant returns g with every text a person reads escaped as a card
// escapes it (bidi controls, invisible and control characters shown as
// <U+…>): a grant's patterns are the agent's words, and on a list of
// grants a pattern holding U+202E reads as another one (red team AG F14).
func CleanGrant(g messages.Grant) messages.Grant {
	one := func(s *string) { *s = card.Sanitize(*s, false) }
	for _, s := range []*string{&g.ID, &g.Tool, &g.SessionID, &g.AgentID, &g.RequestID} {
		one(s)
	}
	g.Patterns = slices.Clone(g.Patterns)
	for i := range g.Patterns {
		one(&g.Patterns[i])
	}
	g.Teams = slices.Clone(g.Teams)
	for i := range g.Teams {
		one(&g.Teams[i])
	}
	g.Approvers = slices.Clone(g.Approvers)
	for i := range g.Approvers {
		one(&g.Approvers[i].ID)
		one(&g.Approvers[i].Display)
		one(&g.Approvers[i].Channel)
	}
	return g
}

// GrantText says what a grant allows, in words: "bash(npm install *) for
// agent pod-7 in session s1", "every write call for agent pod-7".
func GrantText(g messages.Grant) string {
	o := Offer{Offered: true, Tool: card.OneLine(g.Tool)}
	o.Patterns, o.MorePatterns = card.ClipPatterns(g.Patterns, DefaultLimits)
	s := o.Short()
	switch {
	case g.SessionID != "" && g.AgentID != "":
		s += " for agent " + card.OneLine(g.AgentID) + " in session " + card.OneLine(g.SessionID)
	case g.SessionID != "":
		s += " for session " + card.OneLine(g.SessionID)
	case g.AgentID != "":
		s += " for agent " + card.OneLine(g.AgentID)
	}
	return s
}

// GrantApprovers names who approved a grant: "Alice via web, carol via
// slack".
func GrantApprovers(g messages.Grant) string {
	names := make([]string, 0, len(g.Approvers))
	for _, a := range g.Approvers {
		n := DecidedBy(messages.Decision{DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: a.ID, Display: a.Display, Channel: a.Channel}})
		names = append(names, card.OneLine(n))
	}
	if len(names) == 0 {
		return "nobody recorded"
	}
	return strings.Join(names, ", ")
}

// GrantExpiry says when a grant ends: "expires 2026-12-24 09:15 UTC", or
// for one without expiry, "ends with the session" or "never expires".
func GrantExpiry(g messages.Grant) string {
	switch {
	case !g.ExpiresAt.IsZero():
		return "expires " + g.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
	case g.SessionID != "":
		return "ends with the session"
	}
	return "never expires"
}

// GrantErrorText says why a grant could not be listed or revoked, for the
// approver.
func GrantErrorText(err error) string {
	var re *messages.ReplyError
	switch {
	case errors.Is(err, ErrUnknownApprover):
		return err.Error()
	case errors.As(err, &re):
		return "the brokers refused: " + re.Message
	case IsUnconfirmed(err):
		return "no answer from the brokers: " + err.Error()
	}
	return err.Error()
}
