package messages

import (
	"encoding/json"
	"time"
)

// Fixtures: one realistic, fully populated value of every message type.
// Each function returns a fresh value so tests may modify it.

var (
	fixtureDecidedAt = time.Date(2026, 3, 14, 9, 26, 53, 589000000, time.UTC)
	fixtureExpiresAt = time.Date(2026, 3, 14, 9, 31, 53, 0, time.UTC)
)

func validRequest() *Request {
	return &Request{
		V:           Version,
		RequestID:   "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID:   "sess-7f3a",
		AgentID:     "pod-agent-12",
		AgentType:   "coder",
		RequestedBy: "alice",
		CallID:      "toolu_01A2B3C4",
		Tool:        "bash",
		Category:    CategoryExec,
		Arguments:   json.RawMessage(`{"command":"npm install && npm run build > build.log"}`),
		Description: "Install dependencies and build",
		BatchRemaining: []BatchItem{
			{Tool: "write", Arguments: json.RawMessage(`{"file_path":"config.json","content":"{}"}`)},
			{Tool: "bash", Arguments: json.RawMessage(`{"command":"npm test"}`)},
		},
		TTLMillis: 300000,
	}
}

func validResponse() *Response {
	return &Response{
		V:         Version,
		RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID: "sess-7f3a",
		Approver:  Approver{ID: "bob", Display: "Bob Ng", Channel: "web", Device: "Bob's phone"},
		Approved:  true,
		Scope:     ScopeSession,
		Feedback:  "ok for this session",
		Answer:    json.RawMessage(`"staging"`),
		Signature: "c2lnbmF0dXJl",
	}
}

// validEditedResponse approves the call with changes.
func validEditedResponse() *Response {
	return &Response{
		V:                Version,
		RequestID:        "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID:        "sess-7f3a",
		Approver:         Approver{ID: "bob", Display: "Bob Ng", Channel: "web", Device: "Bob's phone"},
		Approved:         true,
		Scope:            ScopeOnce,
		Feedback:         "install only, build later",
		UpdatedArguments: json.RawMessage(`{"command":"npm ci"}`),
	}
}

// validEditedDecision is the decision of validEditedResponse.
func validEditedDecision() *Decision {
	return &Decision{
		V:                Version,
		RequestID:        "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID:        "sess-7f3a",
		Tool:             "bash",
		Outcome:          OutcomeAllow,
		ReasonCode:       ReasonApproved,
		Reason:           "approved with changes (once) by bob",
		Scope:            ScopeOnce,
		Feedback:         "install only, build later",
		UpdatedArguments: json.RawMessage(`{"command":"npm ci"}`),
		DecidedBy:        Decider{Kind: DeciderApprover, ID: "bob", Display: "Bob Ng", Channel: "web", Device: "Bob's phone"},
		DecidedAt:        fixtureDecidedAt,
		PolicyVersion:    "sha256:9f86d081884c7d65",
	}
}

func validRejection() *Response {
	return &Response{
		V:          Version,
		RequestID:  "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID:  "sess-7f3a",
		Approver:   Approver{ID: "bob"},
		Approved:   false,
		RejectMode: RejectSoft,
		Feedback:   "Use yarn instead",
	}
}

func validDecision() *Decision {
	return &Decision{
		V:              Version,
		RequestID:      "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID:      "sess-7f3a",
		Tool:           "bash",
		Outcome:        OutcomeAllow,
		ReasonCode:     ReasonApproved,
		Reason:         "approved by bob (always)",
		Scope:          ScopeAlways,
		GrantedPattern: []string{"npm install *", "npm run build"},
		DecidedBy:      Decider{Kind: DeciderApprover, ID: "bob", Display: "Bob Ng", Channel: "web", Device: "Bob's phone"},
		DecidedAt:      fixtureDecidedAt,
		PolicyVersion:  "sha256:9f86d081884c7d65",
	}
}

func validDenyDecision() *Decision {
	return &Decision{
		V:          Version,
		RequestID:  "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID:  "sess-7f3a",
		Tool:       "write",
		Outcome:    OutcomeDeny,
		ReasonCode: ReasonRejected,
		Reason:     "rejected by bob",
		RejectMode: RejectHard,
		Feedback:   "Wrong approach",
		LLMMessage: LLMMessageHardReject("write", "Wrong approach"),
		DecidedBy:  Decider{Kind: DeciderApprover, ID: "bob"},
		DecidedAt:  fixtureDecidedAt,
	}
}

func validReceipt() *Receipt {
	return &Receipt{V: Version, RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T", State: StateApproved, Decision: validDecision(), Identity: IdentityVerified}
}

func validPendingReceipt() *Receipt {
	return &Receipt{V: Version, RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T", State: StatePending, ExpiresAt: fixtureExpiresAt, Identity: IdentityDeclared}
}

func validApprovalNeeded() *ApprovalNeeded {
	req := validRequest()
	req.Identity = IdentityVerified // the broker marks every request it accepts
	return &ApprovalNeeded{
		V:       Version,
		Type:    TypeApprovalNeeded,
		Request: *req,
		Team:    "oncall",
		Risk: Risk{
			Tier:   "exec",
			Rule:   "Bash(npm *): ask",
			Reason: "exec tier asks in always-ask mode",
			Subcommands: []Verdict{
				{Command: "npm install", Words: []string{"npm", "install"}, Kind: "command", Action: "ask", Rule: "Bash(npm *)"},
				{Command: "> build.log", Kind: "redirect", Action: "allow", Reason: "write inside workspace"},
			},
			Shell: true,
		},
		BatchRemaining:    req.BatchRemaining,
		ExpiresAt:         fixtureExpiresAt,
		ApprovalsRequired: 2,
		ApprovalsSoFar:    []string{"carol"},
		Always:            &AlwaysGrant{Scope: ScopeAlwaysPrefix, Tool: "bash", Patterns: []string{"npm install *", "npm run build"}},
		Offers: []GrantOffer{
			{Scope: ScopeSession, Offered: true, Tool: "bash", Patterns: []string{"npm install *", "npm run build"}},
			{Scope: ScopeAlwaysPrefix, Offered: true, Tool: "bash", Patterns: []string{"npm install *", "npm run build"}},
		},
	}
}

func validGrant() *Grant {
	return &Grant{
		ID:        "gr_3kq7x2mz9d4vbn8c",
		Scope:     ScopeAlwaysPrefix,
		AgentID:   "pod-agent-12",
		Tool:      "bash",
		Patterns:  []string{"npm install *", "npm run build"},
		Teams:     []string{"oncall"},
		Approvers: []Approver{{ID: "bob", Display: "Bob Ng", Channel: "web"}, {ID: "carol", Channel: "slack"}},
		RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		CreatedAt: fixtureDecidedAt,
		ExpiresAt: fixtureDecidedAt.Add(720 * time.Hour),
	}
}

func validGrantEvent() *GrantEvent {
	return &GrantEvent{V: Version, Type: TypeGrantEvent, Event: GrantRevoked, Grant: *validGrant(), SessionID: "sess-7f3a",
		By: "carol", Replica: "broker-7d9f-2", Recorded: fixtureDecidedAt.Add(time.Hour)}
}

func validRespondReply() *RespondReply {
	return &RespondReply{V: Version, Applied: true, State: StateApproved, Decision: validDecision(), ApprovalsSoFar: []string{"bob", "carol"}}
}

func validResolved() *Resolved {
	return &Resolved{V: Version, Type: TypeResolved, RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID: "sess-7f3a", Team: "oncall", State: StateApproved, Decision: *validDecision()}
}

func validAuditRecord() *AuditRecord {
	a := validApprovalNeeded()
	return &AuditRecord{V: Version, Request: verifiedRequest(), Decision: *validDecision(), Risk: &a.Risk,
		Replica: "broker-7d9f-2", Recorded: fixtureDecidedAt.Add(2 * time.Millisecond), Mode: "always-ask",
		Shadow: &ShadowVerdict{PolicyVersion: "sha256:2c26b46b68ffc68f", Action: "deny", Live: "ask", Rule: "Bash(npm install *): deny"}}
}

// validAuditBatch is two automatic decisions' records of one session,
// appended as one message: an allow and, a moment later, a deny of the
// next request.
func validAuditBatch() *AuditBatch {
	first := validAuditRecord()
	first.Risk, first.Shadow, first.Mode = nil, nil, ""
	first.Decision.Outcome, first.Decision.ReasonCode, first.Decision.Reason = OutcomeAllow, ReasonPolicyAllow, "allowed by rule Bash(npm install *)"
	first.Decision.Scope, first.Decision.GrantedPattern = "", nil
	first.Decision.DecidedBy = Decider{Kind: DeciderPolicy, ID: "Bash(npm install *): allow"}
	second := *first
	second.Request.RequestID = "01JQ8Z7B2C4D6E8F0G2H4J6K8M"
	second.Request.Arguments = json.RawMessage(`{"command":"rm -rf /"}`)
	second.Decision.RequestID = second.Request.RequestID
	second.Decision.Outcome, second.Decision.ReasonCode, second.Decision.Reason = OutcomeDeny, ReasonPolicyDeny, "denied by safety override rm-root"
	second.Decision.DecidedBy = Decider{Kind: DeciderPolicy, ID: "safety:rm-root"}
	second.Decision.DecidedAt = first.Decision.DecidedAt.Add(700 * time.Microsecond)
	second.Recorded = first.Recorded.Add(700 * time.Microsecond)
	return &AuditBatch{V: Version, Type: AuditBatchType, SessionID: first.Decision.SessionID,
		Records: []AuditRecord{*first, second}}
}

// verifiedRequest is validRequest as the broker stores it: marked verified.
func verifiedRequest() Request {
	r := *validRequest()
	r.Identity = IdentityVerified
	return r
}
