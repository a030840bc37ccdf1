package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signoff-dev/signoff/internal/metricdef"
	"github.com/signoff-dev/signoff/internal/replay"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// shadowKey is the ModesBucket key of the shadow policy (its YAML): kept
// where the mode overrides are, so every replica, a restarted one too,
// judges with it until an admin clears it.
const shadowKey = "shadow.policy"

// shadowFile names the shadow policy in its errors.
const shadowFile = "shadow-policy.yaml"

// shadowPolicy is the shadow policy in force on this replica (nil: none).
type shadowPolicy struct {
	p atomic.Pointer[policy.Policy]
}

// apply follows the bucket's shadow key. A value that does not parse (set
// by hand: set_shadow refuses one) leaves no shadow policy.
func (s *shadowPolicy) apply(value []byte, deleted bool, log *slog.Logger) {
	if deleted {
		s.p.Store(nil)
		log.Info("shadow policy cleared")
		return
	}
	p, err := policy.Parse(value, shadowFile)
	if err != nil {
		s.p.Store(nil)
		log.Error("ignoring a shadow policy that does not parse", "err", err)
		return
	}
	s.p.Store(p)
	log.Info("shadow policy set", "policy_version", p.Version())
}

// newShadowDifferences is signoff_shadow_differences_total.
func newShadowDifferences() *prometheus.CounterVec {
	return metricdef.CounterVec("signoff_shadow_differences_total",
		"Requests the shadow policy would have decided otherwise than the live one, by live verdict (from) and shadow verdict (to): allow, ask, deny.", "from", "to")
}

// shadowJudge fills rec.Shadow with the shadow policy's verdict, if one is
// set, and counts a difference. It runs where the audit record is built:
// after the reply for automatic decisions (Finish), so the agent does not
// wait for it (in strict audit mode an allow's record, and so this, comes
// before the reply).
func (b *Broker) shadowJudge(rec *messages.AuditRecord) {
	p := b.modes.shadow.p.Load()
	if p == nil {
		return
	}
	v := replay.JudgeShadow(p, &rec.Request, &rec.Decision, rec.Mode)
	if v == nil {
		return
	}
	rec.Shadow = v
	if v.Action != v.Live {
		b.m.ShadowDifferences.WithLabelValues(v.Live, v.Action).Inc()
	}
}

// adminSetShadow serves set_shadow and clear_shadow: it stores (or deletes)
// the shadow policy in the modes bucket, which every replica follows. A
// policy that does not parse is refused with its line-precise error and
// changes nothing.
func (b *Broker) adminSetShadow(ctx context.Context, req messages.AdminRequest) []byte {
	if b.modes.kv == nil {
		return encodeError(messages.CodeUnavailable, "a shadow policy needs JetStream (the broker runs with the audit stream disabled)")
	}
	var err error
	msg := "shadow policy cleared on every replica"
	if req.Policy == "" {
		err = b.modes.kv.Delete(ctx, shadowKey)
	} else {
		p, perr := policy.Parse([]byte(req.Policy), shadowFile)
		if perr != nil {
			b.m.BadMessages.WithLabelValues(string(messages.CodeInvalidRequest)).Inc()
			var ce *policy.ConfigError
			if errors.As(perr, &ce) {
				return encodeError(messages.CodeInvalidRequest, "shadow policy: "+ce.Error())
			}
			return encodeError(messages.CodeInvalidRequest, "shadow policy: "+perr.Error())
		}
		_, err = b.modes.kv.Put(ctx, shadowKey, []byte(req.Policy))
		msg = fmt.Sprintf("shadow policy %s set on every replica (live %s)", p.Version(), b.cfg.Policy.Current().Version())
	}
	if err != nil {
		b.m.NATSErrors.WithLabelValues("kv").Inc()
		return encodeError(messages.CodeUnavailable, "cannot store the shadow policy: "+err.Error())
	}
	b.log.Info("admin: "+msg, "shadow", strings.TrimSuffix(msg, " on every replica"))
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: msg})
}
