package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// handleAdmin serves the admin operations handled by one replica. The admin
// subjects are apart from everything an agent may publish on: the NATS
// permissions of deploy/nats give them to admins only (and list_grants and
// revoke_grant to the approver bot, which names the user it acts for in
// `by`), and no agent message carries a mode.
func (b *Broker) handleAdmin(ctx context.Context, msg *nats.Msg) []byte {
	op, err := b.subj.AdminOpFromSubject(msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	if slices.Contains(scatterOps, op) {
		return nil // every replica handles it on its own subscription
	}
	req, errReply := b.adminRequest(op, msg)
	if errReply != nil {
		return errReply
	}
	if out := b.fleetAdmin(ctx, op, req); out != nil {
		return out
	}
	if out := b.breakerAdmin(ctx, op, req); out != nil {
		return out
	}
	if out := b.canaryAdmin(ctx, op, req); out != nil {
		return out
	}
	switch op {
	case messages.AdminOpSetMode:
		return b.adminSetMode(ctx, req)
	case messages.AdminOpRevokeGrants:
		sctx, cancel := b.storeCtx(ctx)
		gs, err := b.store.RevokeGrants(sctx, req.SessionID, req.AgentID)
		cancel()
		if err != nil {
			return b.storeFailure("revoke", err)
		}
		for i := range gs {
			b.grantRevoked(&gs[i], "")
		}
		b.log.Info("grants revoked", "session_id", req.SessionID, "agent_id", req.AgentID, "count", len(gs))
		return encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("revoked %d grants", len(gs))})
	case messages.AdminOpListGrants:
		return b.adminListGrants(ctx, req)
	case messages.AdminOpRevokeGrant:
		return b.adminRevokeGrant(ctx, req)
	case messages.AdminOpSetShadow, messages.AdminOpClearShadow:
		return b.adminSetShadow(ctx, req)
	}
	// ValidateOp knows every op this switch serves.
	return encodeError(messages.CodeInternal, fmt.Sprintf("admin operation %q is valid but not served", op))
}

// adminRequest decodes the body of an admin message and checks it against
// its operation (messages.AdminRequest.ValidateOp: the one place admin
// requests are validated). On a problem it returns the error reply.
func (b *Broker) adminRequest(op string, msg *nats.Msg) (messages.AdminRequest, []byte) {
	req, err := messages.Decode[messages.AdminRequest](msg.Data, b.cfg.MaxMessageBytes)
	if err == nil {
		err = req.ValidateOp(op)
	}
	if err != nil {
		return req, b.badMessage(err)
	}
	return req, nil
}

func (b *Broker) adminSetMode(ctx context.Context, req messages.AdminRequest) []byte {
	if b.modes.kv == nil {
		return encodeError(messages.CodeUnavailable, "mode overrides need JetStream (the broker runs with the audit stream disabled)")
	}
	key := sessionModeKey(req.SessionID)
	if req.AgentType != "" {
		key = agentModeKey(req.AgentType)
	}
	var err error
	if req.Mode == "" {
		err = b.modes.kv.Delete(ctx, key)
	} else {
		_, err = b.modes.kv.Put(ctx, key, []byte(req.Mode))
	}
	if err != nil {
		b.m.NATSErrors.WithLabelValues("kv").Inc()
		return encodeError(messages.CodeUnavailable, "cannot store the mode override: "+err.Error())
	}
	b.log.Info("mode override set", "session_id", req.SessionID, "agent_type", req.AgentType, "mode", req.Mode)
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: "mode override stored; every replica applies it"})
}

// handleReload reloads the policy on this replica; every replica answers,
// the requester keeps the first reply.
//
// The body is an AdminRequest without fields (`{"v":1}`); anything else is
// an invalid_request and reloads nothing.
func (b *Broker) handleReload(_ context.Context, msg *nats.Msg) []byte {
	if _, errReply := b.adminRequest(messages.AdminOpReloadPolicy, msg); errReply != nil {
		return errReply
	}
	err := b.cfg.Policy.Reload()
	if _, counted := b.cfg.Policy.(reloadReporter); !counted {
		b.m.policyReloaded(policy.ReloadEvent{Err: err, Version: b.cfg.Policy.Current().Version()})
	}
	if err != nil {
		b.log.Error("policy reload failed; the last good policy stays in force", "err", err)
		var ce *policy.ConfigError
		if errors.As(err, &ce) {
			return encodeError(messages.CodeInvalidRequest, ce.Error())
		}
		return encodeError(messages.CodeInvalidRequest, err.Error())
	}
	v := b.cfg.Policy.Current().Version()
	b.log.Info("policy reloaded", "policy_version", v)
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: "policy " + v + " in force on " + b.cfg.Replica})
}

// byTeams returns the teams of the policy approver by is a member of (an
// open team counts only in dev mode, as for answering), or an error reply
// when by is nobody the policy knows.
func (b *Broker) byTeams(pol *policy.Policy, by string) ([]string, []byte) {
	var out []string
	for name, t := range pol.Teams() {
		if t.Open() && !b.cfg.OpenTeams {
			continue
		}
		if t.IsMember(by) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		b.m.BadMessages.WithLabelValues(string(messages.CodeForbidden)).Inc()
		return nil, encodeError(messages.CodeForbidden, fmt.Sprintf("approver %q is not a member of any team of the policy", by))
	}
	slices.Sort(out)
	return out, nil
}

// allTeams returns the policy's team names, sorted.
func allTeams(pol *policy.Policy) []string {
	teams := pol.Teams()
	out := make([]string, 0, len(teams))
	for name := range teams {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// adminListGrants serves list_grants: the grants of a session, an agent
// and/or teams; with by, only those of teams by is a member of.
func (b *Broker) adminListGrants(ctx context.Context, req messages.AdminRequest) []byte {
	pol := b.cfg.Policy.Current()
	q := session.GrantQuery{SessionID: req.SessionID, AgentID: req.AgentID, Teams: req.Teams}
	if req.By != "" {
		mine, errReply := b.byTeams(pol, req.By)
		if errReply != nil {
			return errReply
		}
		if len(req.Teams) > 0 {
			var both []string
			for _, t := range req.Teams {
				if slices.Contains(mine, t) {
					both = append(both, t)
				}
			}
			if len(both) == 0 {
				b.m.BadMessages.WithLabelValues(string(messages.CodeForbidden)).Inc()
				return encodeError(messages.CodeForbidden, fmt.Sprintf("approver %q is not a member of team %s", req.By, strings.Join(req.Teams, ", ")))
			}
			mine = both
		}
		q.Teams = mine
	}
	if q.SessionID == "" && q.AgentID == "" && len(q.Teams) == 0 {
		q.Teams = allTeams(pol)
	}
	sctx, cancel := b.storeCtx(ctx)
	gs, err := b.store.ListGrants(sctx, q)
	cancel()
	if err != nil {
		return b.storeFailure("list grants", err)
	}
	out := make([]messages.Grant, len(gs))
	for i := range gs {
		out[i] = gs[i].Grant
	}
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("%d grants", len(out)), Grants: out})
}

// adminRevokeGrant serves revoke_grant: it finds the grant among those of
// the policy's teams and revokes it; with by, only when by is a member of
// one of the grant's teams.
func (b *Broker) adminRevokeGrant(ctx context.Context, req messages.AdminRequest) []byte {
	pol := b.cfg.Policy.Current()
	var mine []string
	if req.By != "" {
		var errReply []byte
		if mine, errReply = b.byTeams(pol, req.By); errReply != nil {
			return errReply
		}
	}
	sctx, cancel := b.storeCtx(ctx)
	gs, err := b.store.ListGrants(sctx, session.GrantQuery{Teams: allTeams(pol)})
	cancel()
	if err != nil {
		return b.storeFailure("list grants", err)
	}
	i := slices.IndexFunc(gs, func(g session.Grant) bool { return g.ID == req.GrantID })
	if i < 0 {
		b.m.BadMessages.WithLabelValues(string(messages.CodeNotFound)).Inc()
		return encodeError(messages.CodeNotFound, fmt.Sprintf("no grant %s (never made, revoked, or expired)", req.GrantID))
	}
	g := gs[i]
	if req.By != "" && !slices.ContainsFunc(g.Teams, func(t string) bool { return slices.Contains(mine, t) }) {
		b.m.BadMessages.WithLabelValues(string(messages.CodeForbidden)).Inc()
		b.log.Warn("grant revoke refused", "grant_id", g.ID, "by", req.By, "teams", strings.Join(g.Teams, ","))
		return encodeError(messages.CodeForbidden, fmt.Sprintf("approver %q may not revoke grant %s: it was approved for team %s, and %s is not a member",
			req.By, g.ID, strings.Join(g.Teams, ", "), req.By))
	}
	sctx, cancel = b.storeCtx(ctx)
	revoked, err := b.store.RevokeGrant(sctx, g)
	cancel()
	if errors.Is(err, session.ErrNotFound) {
		b.m.BadMessages.WithLabelValues(string(messages.CodeNotFound)).Inc()
		return encodeError(messages.CodeNotFound, fmt.Sprintf("no grant %s (revoked or expired meanwhile)", req.GrantID))
	}
	if err != nil {
		return b.storeFailure("revoke grant", err)
	}
	b.grantRevoked(&revoked, req.By)
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: "grant " + revoked.ID + " revoked", Grant: &revoked.Grant})
}

// grantRevoked records a revoked grant: metric, log, audit.
func (b *Broker) grantRevoked(g *session.Grant, by string) {
	if by == "" {
		by = "admin"
	}
	b.m.Grants.WithLabelValues(string(messages.GrantRevoked)).Inc()
	b.log.Info("grant revoked", "grant_id", g.ID, "scope", g.Scope, "session_id", g.SessionID, "agent_id", g.AgentID, "by", by)
	b.eng.GrantEvent(messages.GrantRevoked, g, "", by)
}
