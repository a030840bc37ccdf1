package messages

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// DigestPrefix starts every question digest: the hash that made it.
const DigestPrefix = "sha256:"

// digestLen is the length of a digest: the prefix and 64 hex digits.
const digestLen = len(DigestPrefix) + 2*sha256.Size

// shown is what a question shows an approver and an approval approves: the
// request (tool, arguments, description, working directory, agent,
// session, requester…), the risk (tier, rule, reasons, safety override,
// each sub-command's verdict), the rest of the batch, the quorum, the
// offers, an ask-user question's questions and whether approving needs
// step-up. Expiry, approvals counted so
// far and escalation reminders change while the question stays the same
// question, so they are not part of it.
type shown struct {
	Request           Request      `json:"request"`
	Risk              Risk         `json:"risk"`
	BatchRemaining    []BatchItem  `json:"batch_remaining"`
	ApprovalsRequired int          `json:"approvals_required"`
	Always            *AlwaysGrant `json:"always"`
	Offers            []GrantOffer `json:"offers"`
	AskUser           *AskUser     `json:"ask_user"`
	// StepUp is left out when nil, so the digests of questions without
	// it are what they were before it existed.
	StepUp *StepUpNeed `json:"step_up,omitempty"`
}

// ShownDigest is the digest of what q shows: "sha256:" and the hex SHA-256
// of the JSON of the parts listed above, in a fixed order. The brokers set
// it as q's Digest on every copy they publish; an approver's response
// names it ([Response.Digest]) and the brokers refuse a response whose
// digest is not the open question's. Two copies of a question with the same
// digest show the same call; a copy with another is another question.
func (q *ApprovalNeeded) ShownDigest() string {
	s := shown{Request: q.Request, Risk: q.Risk, BatchRemaining: q.BatchRemaining, ApprovalsRequired: max(q.ApprovalsRequired, 1),
		Always: q.Always, Offers: q.Offers, AskUser: q.AskUser, StepUp: q.StepUp}
	data, err := json.Marshal(s)
	if err != nil {
		// Only a json.RawMessage that is not JSON gets here (a question
		// decoded from the wire never holds one): its bytes still
		// count, so two such questions differ when they differ.
		data = append([]byte(err.Error()), q.Request.Arguments...)
	}
	sum := sha256.Sum256(data)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// checkDigest checks a digest field: empty, or "sha256:" and 64 lower-case
// hex digits.
func checkDigest(field, d string) error {
	if d == "" {
		return nil
	}
	rest, ok := strings.CutPrefix(d, DigestPrefix)
	if !ok || len(d) != digestLen || strings.Trim(rest, "0123456789abcdef") != "" {
		return &FieldError{Field: field, Problem: "must be " + DigestPrefix + " and 64 lower-case hex digits (the question's digest), or omitted"}
	}
	return nil
}
