package broker

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func sleepTick() <-chan time.Time { return time.After(10 * time.Millisecond) }

// subscribe subscribes the plane to every subject a broker serves; each
// message goes to its tenant's broker (admit).
func (p *Plane) subscribe() error {
	// The routes' subjects and order are the same for every broker.
	tmpl := (&Broker{subj: p.subj}).routes()
	var subs []*nats.Subscription
	for i, r := range tmpl {
		var sub *nats.Subscription
		var err error
		switch {
		case r.subject == p.subj.Admin(messages.AdminOpStopsChanged):
			sub, err = p.cfg.Base.Conn.Subscribe(r.subject, p.everyTenant(i))
		case r.broadcast:
			sub, err = p.cfg.Base.Conn.Subscribe(r.subject, p.route(i, r.kind))
		case r.subject == p.subj.AdminAll():
			// stops_changed matches admin.> too: a replica's broadcast,
			// without a tenant's identity, which everyTenant serves; here
			// it would be refused as forbidden and logged as an attack on
			// every stop and resume (README walk W11).
			route, changed := p.route(i, r.kind), p.subj.Admin(messages.AdminOpStopsChanged)
			sub, err = p.cfg.Base.Conn.QueueSubscribe(r.subject, messages.QueueGroup, func(msg *nats.Msg) {
				if msg.Subject != changed {
					route(msg)
				}
			})
		default:
			sub, err = p.cfg.Base.Conn.QueueSubscribe(r.subject, messages.QueueGroup, p.route(i, r.kind))
		}
		if err != nil {
			for _, s := range subs {
				_ = s.Unsubscribe()
			}
			return fmt.Errorf("broker: plane: subscribe %s: %w", r.subject, err)
		}
		_ = sub.SetPendingLimits(1<<20, 256<<20)
		subs = append(subs, sub)
	}
	p.mu.Lock()
	p.subs = subs
	p.mu.Unlock()
	return p.cfg.Base.Conn.Flush()
}

func (p *Plane) unsubscribe() {
	p.mu.Lock()
	subs := p.subs
	p.subs = nil
	p.mu.Unlock()
	drain(subs, p.log, p.cfg.Base.StoreTimeout+5*time.Second)
}

// everyTenant is the NATS handler of the fleet stops' broadcast, which a
// replica sends after a stop or a resume, from the brokers' account and so
// without a tenant: every tenant's broker reads its stops again at once.
// Nothing else happens on it, so it needs no identity (anyone who could
// publish it only makes the replicas read sooner).
func (p *Plane) everyTenant(i int) nats.MsgHandler {
	return func(msg *nats.Msg) {
		p.mu.RLock()
		defer p.mu.RUnlock()
		for _, pt := range p.tenants {
			pt.b.enqueue(job{h: pt.routes[i].h, msg: msg})
		}
	}
}

// route is the NATS handler of the i-th route: admit, then the tenant's
// broker handles the message on its workers.
func (p *Plane) route(i int, kind messages.SubjectKind) nats.MsgHandler {
	return func(msg *nats.Msg) {
		pt, user, code, reason := p.admit(kind, msg)
		if reason != "" {
			p.refuse(msg, code, reason)
			return
		}
		pt.b.enqueue(job{h: pt.routes[i].h, msg: msg, caller: user})
	}
}

// admit resolves msg's tenant and requester from its Nats-Request-Info
// (parsed here, once) and refuses what the requester's role may not do:
// status, cancel and turn need an agent allowed the session; respond and
// pending a bot; admin an admin (or a bot for list_grants and
// revoke_grant). A request's agent id and type are checked by the
// tenant's broker, which decodes it (Broker.identify).
func (p *Plane) admit(kind messages.SubjectKind, msg *nats.Msg) (pt *planeTenant, user string, code messages.ErrorCode, reason string) {
	vals := msg.Header.Values(tenancy.RequestInfoHeader)
	if len(vals) > 1 {
		// The server sets one; a second is a client's, smuggled past it.
		return nil, "", messages.CodeForbidden, fmt.Sprintf("%d %s headers: the server sets exactly one", len(vals), tenancy.RequestInfoHeader)
	}
	hdr := ""
	if len(vals) == 1 {
		hdr = vals[0]
	}
	p.mu.RLock()
	t, ri, err := p.file.Resolve(hdr)
	account := ""
	if t != nil {
		account = t.Account
	}
	pt = p.tenants[account]
	p.mu.RUnlock()
	if err != nil {
		return nil, "", messages.CodeForbidden, err.Error()
	}
	if pt == nil {
		return nil, "", messages.CodeUnavailable, "tenant is not served yet; retry"
	}
	if t == nil {
		return pt, "", "", "" // the declared tenant: no credentials to check
	}
	if reason := p.authorize(kind, t, ri.User, msg.Subject); reason != "" {
		return nil, "", messages.CodeForbidden, reason
	}
	return pt, ri.User, "", ""
}

// authorize returns why user of tenant t may not send msg's kind, or "".
func (p *Plane) authorize(kind messages.SubjectKind, t *tenancy.Tenant, user, subject string) string {
	switch kind {
	case messages.SubjectReq, messages.SubjectStatus, messages.SubjectCancel, messages.SubjectTurn:
		id := t.Agent(user)
		if id == nil {
			return fmt.Sprintf("NATS user %q of tenant %q is not an agent of the tenants file", user, t.ID)
		}
		if kind == messages.SubjectReq {
			return "" // the broker checks the body (Broker.identify)
		}
		sessionID, err := p.subj.SessionFromSubject(kind, subject)
		if err != nil {
			return "" // the broker answers the bad subject
		}
		if err := id.CheckSession(sessionID); err != nil {
			return err.Error()
		}
	case messages.SubjectRespond, messages.SubjectPending:
		if !t.IsBot(user) {
			return fmt.Sprintf("NATS user %q of tenant %q is not an approver bot of the tenants file", user, t.ID)
		}
	case messages.SubjectAdmin:
		if t.IsAdmin(user) {
			return ""
		}
		op, _ := p.subj.AdminOpFromSubject(subject)
		if t.IsBot(user) && (op == messages.AdminOpListGrants || op == messages.AdminOpRevokeGrant) {
			return ""
		}
		return fmt.Sprintf("NATS user %q of tenant %q is not an admin of the tenants file", user, t.ID)
	}
	return ""
}

// refuse answers a message the plane does not hand to a broker.
func (p *Plane) refuse(msg *nats.Msg, code messages.ErrorCode, reason string) {
	m := p.cfg.Base.Metrics
	m.BadMessages.WithLabelValues(string(code)).Inc()
	p.log.Warn("refused", "code", code, "reason", reason, "subject", msg.Subject)
	if msg.Reply != "" {
		if err := msg.Respond(encodeError(code, reason)); err != nil {
			m.NATSErrors.WithLabelValues("reply").Inc()
		}
	}
}
