package engine

import (
	"fmt"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Step-up (DESIGN §7, docs/POLICY.md "Step-up"): a question whose policy
// asks for a second factor says so (messages.ApprovalNeeded.StepUp, set
// when it is created and covered by its digest), and an approval of it
// must carry the evidence its bot verified — a WebAuthn assertion made no
// longer ago than the question allows. Like every approval it names the
// question's digest (digest.go), to which the bot bound the assertion's
// challenge. Rejections never need it.

// stepUpSkew is how far in the future an assertion's time may lie: the
// bot's clock and the broker's are different machines' clocks.
const stepUpSkew = 5 * time.Second

// stepUpRefusal is why the approval resp of q lacks the second factor q
// needs ("" when q needs none or resp has it), at now.
func stepUpRefusal(q *messages.ApprovalNeeded, resp *messages.Response, now time.Time) string {
	need := q.StepUp
	if need == nil {
		return ""
	}
	ev := resp.StepUp
	const hint = ": approve on the web page, which asks for the approver's passkey or security key"
	switch {
	case ev == nil:
		return "approving this call needs step-up (" + need.Why + "), and the response carries none" + hint
	case ev.Method != messages.StepUpWebAuthn:
		return fmt.Sprintf("approving this call needs a WebAuthn step-up, and the response carries %q", ev.Method) + hint
	case ev.AssertedAt.After(now.Add(stepUpSkew)):
		return fmt.Sprintf("the step-up assertion is dated %s, in the future", ev.AssertedAt.UTC().Format(time.RFC3339)) + hint
	case now.Sub(ev.AssertedAt) > need.MaxAge():
		return fmt.Sprintf("the step-up assertion is %s old, and this question needs one made in the last %s",
			now.Sub(ev.AssertedAt).Round(time.Second), need.MaxAge()) + hint
	}
	return ""
}
