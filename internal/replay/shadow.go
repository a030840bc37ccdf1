package replay

import (
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// JudgeShadow is the shadow policy cand's verdict on the call of req that
// the live policy decided dec, under the admin's mode override mode: nil
// when dec was not the policy's to make (a hard stop, an unavailable
// store). Live and Action are compared as replay compares them (a grant's
// allow stays an allow where the grant would still settle cand's ask), so
// Live != Action is a difference. Safe for concurrent use.
func JudgeShadow(cand *policy.Policy, req *messages.Request, dec *messages.Decision, mode string) *messages.ShadowVerdict {
	c, ok := compare(cand, req, dec, mode)
	if !ok {
		return nil
	}
	return &messages.ShadowVerdict{PolicyVersion: cand.Version(), Action: string(c.to), Live: string(c.from), Rule: c.d.Rule}
}
