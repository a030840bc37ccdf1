package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// handleAdmin serves the admin operations handled by one replica. The admin
// subjects are apart from everything an agent may publish on: the NATS
// permissions of deploy/nats give them to admins only, and no agent message
// carries a mode.
func (b *Broker) handleAdmin(ctx context.Context, msg *nats.Msg) []byte {
	op, err := b.subj.AdminOpFromSubject(msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	if op == messages.AdminOpReloadPolicy {
		return nil // every replica handles it on its own subscription
	}
	req, err := messages.Decode[messages.AdminRequest](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	switch op {
	case messages.AdminOpSetMode:
		return b.adminSetMode(ctx, req)
	case messages.AdminOpRevokeGrants:
		if req.SessionID == "" && req.AgentID == "" {
			return b.badMessage(&messages.FieldError{Field: "session_id", Problem: "revoke needs session_id, agent_id or both"})
		}
		sctx, cancel := b.storeCtx(ctx)
		n, err := b.store.RevokeGrants(sctx, req.SessionID, req.AgentID)
		cancel()
		if err != nil {
			return b.storeFailure("revoke", err)
		}
		b.log.Info("grants revoked", "session_id", req.SessionID, "agent_id", req.AgentID, "count", n)
		return encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("revoked %d grants", n)})
	}
	return encodeError(messages.CodeInvalidRequest, fmt.Sprintf("unknown admin operation %q (want %s, %s or %s)", op, messages.AdminOpSetMode, messages.AdminOpRevokeGrants, messages.AdminOpReloadPolicy))
}

func (b *Broker) adminSetMode(ctx context.Context, req messages.AdminRequest) []byte {
	if (req.SessionID == "") == (req.AgentType == "") {
		return b.badMessage(&messages.FieldError{Field: "session_id", Problem: "set exactly one of session_id and agent_type"})
	}
	if req.Mode != "" {
		if _, err := policy.ParseMode(req.Mode); err != nil {
			return b.badMessage(&messages.FieldError{Field: "mode", Problem: err.Error()})
		}
	}
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
func (b *Broker) handleReload(_ context.Context, msg *nats.Msg) []byte {
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
