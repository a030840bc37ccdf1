package broker

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// tenantState is what a tenant's broker on a [Plane] knows of its tenant.
type tenantState struct {
	// account is the tenant's NATS account: the token of its subjects
	// (<prefix>.t.<account>.…). "" for the declared tenant.
	account string
	// id is the tenant id (keys, the modes bucket).
	id string
	// t is the tenant's entry of the tenants file in force; a reload swaps
	// it (identities, bots, admins) without restarting the broker. Nil for
	// the declared tenant.
	t atomic.Pointer[tenancy.Tenant]
}

// publishPrefix is the prefix of the subjects the broker publishes on: a
// tenant's decisions, questions, resolutions and audit records go to
// <prefix>.t.<account>.…, which NATS delivers to that account only.
func (c *Config) publishPrefix() string {
	if c.tenant == nil || c.tenant.account == "" {
		return c.Prefix
	}
	return c.Prefix + ".t." + c.tenant.account
}

// auditSubjects are the audit stream's subjects: a plane's brokers share
// the stream with every tenant's audit subjects.
func (c *Config) auditSubjects() []string {
	subj, _ := messages.NewSubjects(c.Prefix)
	if c.tenant == nil {
		return []string{subj.AuditAll()}
	}
	return []string{subj.AuditAll(), c.Prefix + ".t.*.audit.>"}
}

// modesBucket is the key-value bucket of the admin's mode overrides: one
// per tenant.
func (c *Config) modesBucket() string {
	if c.tenant == nil || c.tenant.account == "" {
		return ModesBucket
	}
	return ModesBucket + "_" + strings.ReplaceAll(c.tenant.id, "-", "_")
}

type callerKey struct{}

// withCaller carries the requester's NATS user from the plane's dispatch
// to the handler: the header is parsed once, by the plane.
func withCaller(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, callerKey{}, user)
}

func callerFrom(ctx context.Context) string {
	u, _ := ctx.Value(callerKey{}).(string)
	return u
}

// identify checks a request's declared identity against its credentials'
// (DESIGN §4 step 2) and marks it verified, or declared on a broker that
// serves the declared tenant. The refusal is the forbidden reply.
func (b *Broker) identify(ctx context.Context, req *messages.Request) []byte {
	var t *tenancy.Tenant
	if b.cfg.tenant != nil {
		t = b.cfg.tenant.t.Load()
	}
	if t == nil {
		req.Identity = messages.IdentityDeclared
		return nil
	}
	user := callerFrom(ctx)
	id := t.Agent(user)
	if id == nil {
		return b.forbidden(fmt.Sprintf("NATS user %q of tenant %q is not an agent of the tenants file", user, t.ID))
	}
	if err := id.Check(req.AgentID, req.AgentType, req.SessionID); err != nil {
		return b.forbidden(err.Error())
	}
	req.Identity = messages.IdentityVerified
	return nil
}

// forbidden answers a refused message and counts it.
func (b *Broker) forbidden(reason string) []byte {
	b.m.BadMessages.WithLabelValues(string(messages.CodeForbidden)).Inc()
	b.log.Warn("forbidden", "reason", reason)
	return encodeError(messages.CodeForbidden, reason)
}
