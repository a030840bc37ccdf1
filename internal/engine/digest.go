package engine

import "github.com/signoff-dev/signoff/pkg/messages"

// Approval bound to what was shown (DESIGN §3, §4 step 9): every copy of a
// question the brokers publish carries the digest of what it shows
// (messages.ApprovalNeeded.ShownDigest, set by question), and a response
// names the digest of the copy its approver was shown. A response naming
// another digest answers a question that is not the open one (a copy an
// attacker published on the ask subject, or one changed in transit), so it
// is refused: the approver approved something else than what would run.
//
// The model is closed: an approval without a digest is refused too, as
// nothing says which version of the question it approves (an approver
// client that left it out would reopen the swapped-question attack). A
// rejection without one is applied: refusing it would only keep a call
// someone judged dangerous alive, and a rejection of any version of the
// question is a rejection of the call.

// digestRefusal is why resp may not answer q ("" when it may).
func digestRefusal(q *messages.ApprovalNeeded, resp *messages.Response) string {
	switch {
	case resp.Digest == "" && resp.Approved:
		return "the approval names no digest: an approval must name the digest of the question it approves " +
			"(the approval_needed's digest), so that what the approver was shown is what runs; nothing was decided"
	case resp.Digest == "" || resp.Digest == q.Digest:
		return ""
	}
	return "the response answers another version of this question (digest " + digestShort(resp.Digest) +
		", the open question's is " + digestShort(q.Digest) + "): what the approver was shown is not what would run; nothing was decided"
}

// digestShort is the start of a digest, enough to tell two apart in a log.
func digestShort(d string) string { return d[:min(len(d), len(messages.DigestPrefix)+12)] }
