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
	req, errReply := b.adminRequest(op, msg)
	if errReply != nil {
		return errReply
	}
	switch op {
	case messages.AdminOpSetMode:
		return b.adminSetMode(ctx, req)
	case messages.AdminOpRevokeGrants:
		sctx, cancel := b.storeCtx(ctx)
		n, err := b.store.RevokeGrants(sctx, req.SessionID, req.AgentID)
		cancel()
		if err != nil {
			return b.storeFailure("revoke", err)
		}
		b.log.Info("grants revoked", "session_id", req.SessionID, "agent_id", req.AgentID, "count", n)
		return encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("revoked %d grants", n)})
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
