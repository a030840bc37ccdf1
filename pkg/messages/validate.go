package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of individual fields. The whole message is limited too (see
// [DefaultMaxBytes]); these keep one field from filling it.
const (
	// MaxToolBytes bounds tool names.
	MaxToolBytes = 128
	// MaxIDBytes bounds identifiers that are not subject tokens: agent_type,
	// requested_by, call_id, approver ids and channels.
	MaxIDBytes = 128
	// MaxDescriptionBytes bounds a request's description.
	MaxDescriptionBytes = 4 << 10
	// MaxCwdBytes bounds a request's working directory (PATH_MAX).
	MaxCwdBytes = 4096
	// MaxFeedbackBytes bounds an approver's feedback.
	MaxFeedbackBytes = 4 << 10
	// MaxReasonBytes bounds a cancel reason.
	MaxReasonBytes = 1 << 10
	// MaxDisplayBytes bounds display names and device labels.
	MaxDisplayBytes = 256
	// MaxApproverGroups bounds a response's approver_groups.
	MaxApproverGroups = 64
	// MaxSignatureBytes bounds a response's signature.
	MaxSignatureBytes = 1 << 10
	// MaxCancelIDs bounds the request ids of one cancel request.
	MaxCancelIDs = 1000
	// MaxAdminTeams bounds the teams an admin request filters on.
	MaxAdminTeams = 64
	// MaxUpdatedArgumentsBytes bounds the edited arguments of an approval
	// with changes: half of [DefaultMaxBytes], so that the decision that
	// carries them (with its reason, feedback and llm_message) still fits
	// the message limit every agent applies by default.
	MaxUpdatedArgumentsBytes = 32 << 10
)

// Validate checks the rules of a request beyond its JSON shape: the ids are
// subject tokens, the tool is a bounded printable name, arguments (and those
// of batch_remaining) are JSON objects, and the optional fields are in range.
// The version is the codec's concern ([Decode], [Encode]). Every error is a
// [*FieldError].
//
// Arguments are checked for their outer shape only: a decoded message is
// well-formed JSON by construction, and encoding/json refuses to encode a
// malformed json.RawMessage in a message built in Go.
func (r *Request) Validate() error {
	if err := checkRequestSession(r.RequestID, r.SessionID); err != nil {
		return err
	}
	if err := checkToken("agent_id", r.AgentID); err != nil {
		return err
	}
	if err := checkIdent("tool", r.Tool, MaxToolBytes, true); err != nil {
		return err
	}
	if r.Category != "" && !r.Category.Valid() {
		return enumError("category", string(r.Category), "read, write, exec, mcp or omitted")
	}
	if err := checkObject("arguments", r.Arguments); err != nil {
		return err
	}
	if err := checkText("description", r.Description, MaxDescriptionBytes); err != nil {
		return err
	}
	if err := checkHome(r.Home); err != nil {
		return err
	}
	if err := checkCwd("cwd", r.Cwd); err != nil {
		return err
	}
	if err := checkBatch("batch_remaining", r.BatchRemaining); err != nil {
		return err
	}
	if r.TTLMillis < 0 {
		return &FieldError{Field: "ttl_ms", Problem: "must not be negative, got " + strconv.FormatInt(r.TTLMillis, 10)}
	}
	if err := checkIdent("agent_type", r.AgentType, MaxIDBytes, false); err != nil {
		return err
	}
	if err := checkIdent("requested_by", r.RequestedBy, MaxIDBytes, false); err != nil {
		return err
	}
	return checkIdent("call_id", r.CallID, MaxIDBytes, false)
}

// TTL returns the requested time to live (0 when the policy's default
// applies). A ttl_ms too large for a time.Duration (about 292 years)
// saturates at the largest one instead of wrapping around, so the policy's
// max_ttl caps it like any other long request.
func (r *Request) TTL() time.Duration {
	if r.TTLMillis > math.MaxInt64/int64(time.Millisecond) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(r.TTLMillis) * time.Millisecond
}

func checkBatch(field string, items []BatchItem) error {
	for i := range items {
		if err := checkIdent("tool", items[i].Tool, MaxToolBytes, true); err != nil {
			return nested(field+"["+strconv.Itoa(i)+"]", err)
		}
		if err := checkObject("arguments", items[i].Arguments); err != nil {
			return nested(field+"["+strconv.Itoa(i)+"]", err)
		}
	}
	return nil
}

// Validate checks an approver's response: the ids are subject tokens, the
// approver has an id, scope and reject_mode are known values, scope and
// answer appear only on approvals and reject_mode only on rejections. Every
// error is a [*FieldError].
func (r *Response) Validate() error {
	if err := checkRequestSession(r.RequestID, r.SessionID); err != nil {
		return err
	}
	if err := r.Approver.validate(); err != nil {
		return nested("approver", err)
	}
	if err := checkApproverGroups(r.ApproverGroups); err != nil {
		return err
	}
	if r.Scope != "" && !r.Scope.Valid() {
		return enumError("scope", string(r.Scope), "once, session, always, always_prefix or omitted (once)")
	}
	if r.RejectMode != "" && !r.RejectMode.Valid() {
		return enumError("reject_mode", string(r.RejectMode), "reject_soft, reject_hard or omitted (reject_hard)")
	}
	if !r.Approved && r.Scope != "" {
		return &FieldError{Field: "scope", Problem: "applies only to approvals; omit it when approved is false"}
	}
	if r.Approved && r.RejectMode != "" {
		return &FieldError{Field: "reject_mode", Problem: "applies only to rejections; omit it when approved is true"}
	}
	if !r.Approved && len(r.Answer) > 0 {
		return &FieldError{Field: "answer", Problem: "applies only to approvals; omit it when approved is false"}
	}
	if !r.Approved && len(r.UpdatedArguments) > 0 {
		return &FieldError{Field: "updated_arguments", Problem: "applies only to approvals (approve with changes); omit it when approved is false"}
	}
	if err := checkUpdatedArguments(r.UpdatedArguments); err != nil {
		return err
	}
	if err := checkText("feedback", r.Feedback, MaxFeedbackBytes); err != nil {
		return err
	}
	if err := checkDigest("digest", r.Digest); err != nil {
		return err
	}
	if r.StepUp != nil {
		if !r.Approved {
			return &FieldError{Field: "step_up", Problem: "applies only to approvals (rejecting never needs a second factor); omit it when approved is false"}
		}
		if err := r.StepUp.validate(); err != nil {
			return nested("step_up", err)
		}
	}
	return checkIdent("signature", r.Signature, MaxSignatureBytes, false)
}

// MaxCredentialIDBytes bounds StepUp.CredentialID (WebAuthn allows ids of
// up to 1023 bytes, 1364 in base64url).
const MaxCredentialIDBytes = 1364

func (s *StepUp) validate() error {
	if s.Method != StepUpWebAuthn {
		return enumError("method", s.Method, StepUpWebAuthn)
	}
	if s.CredentialID == "" {
		return &FieldError{Field: "credential_id", Problem: "must be set (the authenticator's credential id, base64url)"}
	}
	if err := checkIdent("credential_id", s.CredentialID, MaxCredentialIDBytes, false); err != nil {
		return err
	}
	if s.AssertedAt.IsZero() {
		return &FieldError{Field: "asserted_at", Problem: "must be set (when the assertion was verified)"}
	}
	return nil
}

// EffectiveScope returns the scope an approval grants: [ScopeOnce] when the
// response leaves it empty, and "" for a rejection.
func (r *Response) EffectiveScope() Scope {
	switch {
	case !r.Approved:
		return ""
	case r.Scope == "":
		return ScopeOnce
	}
	return r.Scope
}

// EffectiveRejectMode returns the mode of a rejection: [RejectHard] when the
// response leaves it empty (seeds 000/003), and "" for an approval.
func (r *Response) EffectiveRejectMode() RejectMode {
	switch {
	case r.Approved:
		return ""
	case r.RejectMode == "":
		return RejectHard
	}
	return r.RejectMode
}

func (a *Approver) validate() error {
	if err := checkIdent("id", a.ID, MaxIDBytes, true); err != nil {
		return err
	}
	if err := checkLine("display", a.Display, MaxDisplayBytes); err != nil {
		return err
	}
	if err := checkIdent("channel", a.Channel, MaxIDBytes, false); err != nil {
		return err
	}
	return checkLine("device", a.Device, MaxDisplayBytes)
}

// checkApproverGroups checks a response's approver_groups.
func checkApproverGroups(groups []string) error {
	if len(groups) > MaxApproverGroups {
		return &FieldError{Field: "approver_groups", Problem: "must hold at most " + strconv.Itoa(MaxApproverGroups) +
			" groups, got " + strconv.Itoa(len(groups))}
	}
	for i, g := range groups {
		field := "approver_groups[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(g) == "" {
			return &FieldError{Field: field, Problem: "must not be empty"}
		}
		// Group names are the provider's: spaces are fine (Okta's
		// "Payments On-Call"), control characters are not.
		if err := checkLine(field, g, MaxDisplayBytes); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks that the request id is a subject token.
func (r *StatusRequest) Validate() error { return checkToken("request_id", r.RequestID) }

// Validate checks the request ids (subject tokens, at most [MaxCancelIDs])
// and the reason.
func (r *CancelRequest) Validate() error {
	if err := checkTokens("request_ids", r.RequestIDs, MaxCancelIDs, "ids"); err != nil {
		return err
	}
	return checkText("reason", r.Reason, MaxReasonBytes)
}

// Validate checks the ids a turn request says the agent has seen.
func (r *TurnRequest) Validate() error { return checkTokens("seen", r.Seen, MaxCancelIDs, "ids") }

// Validate accepts every pending request: it has no field but the version,
// which [Decode] checks. It exists so that every request type validates
// alike.
func (r *PendingRequest) Validate() error { return nil }

// Validate checks the fields an admin request carries, whatever its
// operation: ids are subject tokens, the mode is a known one. Use
// [AdminRequest.ValidateOp] for the fields an operation needs.
func (r *AdminRequest) Validate() error {
	if err := firstError(
		checkOptionalToken("session_id", r.SessionID),
		checkOptionalToken("agent_id", r.AgentID),
		checkIdent("agent_type", r.AgentType, MaxIDBytes, false),
		checkTokens("teams", r.Teams, MaxAdminTeams, "teams"),
		checkOptionalToken("grant_id", r.GrantID),
		checkIdent("by", r.By, MaxIDBytes, false),
	); err != nil {
		return err
	}
	switch r.Mode {
	case "", ModeAlwaysAsk, ModeAutoEdit, ModeYolo:
		return nil
	}
	return enumError("mode", r.Mode, "always-ask, auto-edit, yolo or empty")
}

// ValidateOp checks r for the admin operation op (the last token of its
// subject): [AdminOpSetMode] needs exactly one of session_id and agent_type
// (an empty mode clears the override); [AdminOpRevokeGrants] needs
// session_id, agent_id or both; [AdminOpListGrants] takes session_id,
// agent_id, teams and by, all optional; [AdminOpRevokeGrant] needs grant_id
// and takes by; [AdminOpReloadPolicy] takes no field; the ops of fleet
// operation are checked as docs/PROTOCOL.md "AdminRequest" says (fleet.go). An unknown op is an
// error wrapping [ErrInvalid].
func (r *AdminRequest) ValidateOp(op string) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if known, err := r.validateCanaryOp(op); known || err != nil {
		return err
	}
	if r.Policy != "" && op != AdminOpSetShadow {
		return &FieldError{Field: "policy", Problem: "only set_shadow takes a policy"}
	}
	if known, err := r.validateBreakerOp(op); known || err != nil {
		return err
	}
	if known, err := r.validateFleetOp(op); known {
		return err
	}
	if f := r.fleetExtra(); f != "" {
		return &FieldError{Field: f, Problem: "only stop and resume take a selector and a reason"}
	}
	switch op {
	case AdminOpSetMode:
		if (r.SessionID == "") == (r.AgentType == "") {
			return &FieldError{Field: "session_id", Problem: "set_mode needs exactly one of session_id and agent_type"}
		}
		if r.AgentID != "" {
			return &FieldError{Field: "agent_id", Problem: "set_mode applies to a session or an agent type, not an agent id"}
		}
	case AdminOpRevokeGrants:
		if r.SessionID == "" && r.AgentID == "" {
			return &FieldError{Field: "session_id", Problem: "revoke_grants needs session_id, agent_id or both"}
		}
		if f := r.firstSetField("agent_type", "mode", "teams", "grant_id", "by"); f != "" {
			return &FieldError{Field: f, Problem: "revoke_grants takes only session_id and agent_id"}
		}
	case AdminOpReloadPolicy:
		if f := r.firstSetField("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by", "policy"); f != "" {
			return &FieldError{Field: f, Problem: "reload_policy takes no fields"}
		}
	case AdminOpListGrants:
		if f := r.firstSetField("agent_type", "mode", "grant_id"); f != "" {
			return &FieldError{Field: f, Problem: "list_grants takes only session_id, agent_id, teams and by"}
		}
	case AdminOpRevokeGrant:
		if r.GrantID == "" {
			return &FieldError{Field: "grant_id", Problem: "revoke_grant needs the grant's id"}
		}
		if f := r.firstSetField("session_id", "agent_id", "agent_type", "mode", "teams"); f != "" {
			return &FieldError{Field: f, Problem: "revoke_grant takes only grant_id and by"}
		}
	case AdminOpSetShadow:
		if r.Policy == "" {
			return &FieldError{Field: "policy", Problem: "set_shadow needs the candidate policy's YAML"}
		}
		if f := r.firstSetField("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by"); f != "" {
			return &FieldError{Field: f, Problem: "set_shadow takes only policy"}
		}
	case AdminOpClearShadow:
		if f := r.firstSetField("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by", "policy"); f != "" {
			return &FieldError{Field: f, Problem: "clear_shadow takes no fields"}
		}
	default:
		return fmt.Errorf("%w: unknown admin op %s (want %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s or %s)", ErrInvalid, quoteShort(op),
			AdminOpSetMode, AdminOpReloadPolicy, AdminOpRevokeGrants, AdminOpListGrants, AdminOpRevokeGrant,
			AdminOpListPending, AdminOpStop, AdminOpResume, AdminOpListStops, AdminOpStopsChanged, AdminOpPolicyVersion, AdminOpListAgents,
			AdminOpSetShadow, AdminOpClearShadow, AdminOpListBreakers, AdminOpBreakerReset)
	}
	return nil
}

// firstSetField returns the first of the named fields that is not empty.
func (r *AdminRequest) firstSetField(names ...string) string {
	fields := [...]struct {
		name string
		set  bool
	}{
		{"session_id", r.SessionID != ""}, {"agent_id", r.AgentID != ""}, {"agent_type", r.AgentType != ""},
		{"mode", r.Mode != ""}, {"grant_id", r.GrantID != ""}, {"by", r.By != ""}, {"policy", r.Policy != ""},
		{"teams", len(r.Teams) > 0},
	}
	for _, n := range names {
		for _, f := range fields {
			if f.name == n && f.set {
				return n
			}
		}
	}
	return ""
}

// Validate checks a decision as an agent receives it, failing closed on
// anything it cannot act on: the outcome must be allow or deny, a known
// reason code must match the outcome (unknown codes are accepted: the
// outcome decides), scope appears only on allows and reject_mode only on
// denies, and decided_by and decided_at are set.
func (d *Decision) Validate() error {
	if err := checkRequestSession(d.RequestID, d.SessionID); err != nil {
		return err
	}
	if !d.Outcome.Valid() {
		return enumError("outcome", string(d.Outcome), "allow or deny")
	}
	if d.ReasonCode == "" {
		return &FieldError{Field: "reason_code", Problem: "must not be empty"}
	}
	if want, known := d.ReasonCode.Outcome(); known && want != d.Outcome {
		return &FieldError{Field: "reason_code", Problem: strconv.Quote(string(d.ReasonCode)) +
			" goes with outcome " + string(want) + ", got " + string(d.Outcome)}
	}
	if d.Scope != "" {
		if !d.Scope.Valid() {
			return enumError("scope", string(d.Scope), "once, session, always, always_prefix or omitted")
		}
		if d.Outcome != OutcomeAllow {
			return &FieldError{Field: "scope", Problem: "applies only to outcome allow"}
		}
	}
	if d.RejectMode != "" {
		if !d.RejectMode.Valid() {
			return enumError("reject_mode", string(d.RejectMode), "reject_soft, reject_hard or omitted")
		}
		if d.Outcome != OutcomeDeny {
			return &FieldError{Field: "reject_mode", Problem: "applies only to outcome deny"}
		}
	}
	if len(d.UpdatedArguments) > 0 && d.Outcome != OutcomeAllow {
		return &FieldError{Field: "updated_arguments", Problem: "applies only to outcome allow (an approval with changes)"}
	}
	if err := checkUpdatedArguments(d.UpdatedArguments); err != nil {
		return err
	}
	if d.DecidedBy.Kind == "" {
		return &FieldError{Field: "decided_by.kind", Problem: "must not be empty"}
	}
	if d.DecidedAt.IsZero() {
		return &FieldError{Field: "decided_at", Problem: "must be set"}
	}
	return nil
}

// EffectiveRejectMode returns the reject mode of a deny ([RejectHard] when
// empty) and "" for an allow.
func (d *Decision) EffectiveRejectMode() RejectMode {
	switch {
	case d.Outcome != OutcomeDeny:
		return ""
	case d.RejectMode == "":
		return RejectHard
	}
	return d.RejectMode
}

// Validate checks a receipt: a pending receipt carries expires_at and no
// decision, a final one carries a valid decision for the same request.
func (r *Receipt) Validate() error {
	if err := checkToken("request_id", r.RequestID); err != nil {
		return err
	}
	if !r.State.Valid() {
		return enumError("state", string(r.State), "a known state")
	}
	if r.State == StatePending {
		if r.Decision != nil {
			return &FieldError{Field: "decision", Problem: "must be absent while the request is pending"}
		}
		if r.ExpiresAt.IsZero() {
			return &FieldError{Field: "expires_at", Problem: "must be set while the request is pending"}
		}
		return nil
	}
	return checkDecisionOf("decision", r.Decision, r.RequestID)
}

func checkDecisionOf(field string, d *Decision, requestID string) error {
	if d == nil {
		return &FieldError{Field: field, Problem: "must be present once the request is settled"}
	}
	if err := d.Validate(); err != nil {
		return nested(field, err)
	}
	if d.RequestID != requestID {
		return &FieldError{Field: field + ".request_id", Problem: "must be the request's id " +
			strconv.Quote(requestID) + ", got " + quoteShort(d.RequestID)}
	}
	return nil
}

// Validate checks a question as an approver receives it.
func (a *ApprovalNeeded) Validate() error {
	if a.Type != TypeApprovalNeeded {
		return enumError("type", a.Type, TypeApprovalNeeded)
	}
	if err := a.Request.Validate(); err != nil {
		return nested("request", err)
	}
	if err := checkToken("team", a.Team); err != nil {
		return err
	}
	if a.Risk.Tier == "" {
		return &FieldError{Field: "risk.tier", Problem: "must not be empty"}
	}
	if err := checkBatch("batch_remaining", a.BatchRemaining); err != nil {
		return err
	}
	if a.ExpiresAt.IsZero() {
		return &FieldError{Field: "expires_at", Problem: "must be set"}
	}
	if a.ApprovalsRequired < 0 {
		return &FieldError{Field: "approvals_required", Problem: "must not be negative, got " +
			strconv.Itoa(a.ApprovalsRequired)}
	}
	for i, id := range a.ApprovalsSoFar {
		if err := checkIdent("approvals_so_far["+strconv.Itoa(i)+"]", id, MaxIDBytes, true); err != nil {
			return err
		}
	}
	if a.Always != nil && a.Always.Scope != ScopeAlways && a.Always.Scope != ScopeAlwaysPrefix {
		return enumError("always.scope", string(a.Always.Scope), "always or always_prefix")
	}
	if len(a.Offers) > 2 {
		return &FieldError{Field: "offers", Problem: "must hold at most 2 offers (session, always), got " + strconv.Itoa(len(a.Offers))}
	}
	for i := range a.Offers {
		if err := a.Offers[i].validate(); err != nil {
			return nested("offers["+strconv.Itoa(i)+"]", err)
		}
	}
	if a.StepUp != nil && a.StepUp.MaxAgeS <= 0 {
		return &FieldError{Field: "step_up.max_age_s", Problem: "must be positive, got " + strconv.Itoa(a.StepUp.MaxAgeS)}
	}
	return checkDigest("digest", a.Digest)
}

func (o *GrantOffer) validate() error {
	switch o.Scope {
	case ScopeSession, ScopeAlways, ScopeAlwaysPrefix:
	default:
		return enumError("scope", string(o.Scope), "session, always or always_prefix")
	}
	if o.Offered {
		if err := checkIdent("tool", o.Tool, MaxToolBytes, true); err != nil {
			return err
		}
		if o.WhyNot != "" {
			return &FieldError{Field: "why_not", Problem: "must be empty on an offered scope"}
		}
	} else {
		if o.WhyNot == "" {
			return &FieldError{Field: "why_not", Problem: "must say why the scope is not offered"}
		}
		if len(o.Patterns) > 0 {
			return &FieldError{Field: "patterns", Problem: "must be empty on a scope not offered"}
		}
		if o.Note != "" {
			return &FieldError{Field: "note", Problem: "must be empty on a scope not offered (why_not says why)"}
		}
		if o.Expires != "" {
			return &FieldError{Field: "expires", Problem: "must be empty on a scope not offered"}
		}
	}
	if o.Expires != "" && o.Expires != ExpiresNever {
		if d, err := time.ParseDuration(o.Expires); err != nil || d <= 0 {
			return &FieldError{Field: "expires", Problem: `must be "never" or a positive duration such as "720h0m0s"`}
		}
	}
	if err := checkText("note", o.Note, MaxReasonBytes); err != nil {
		return err
	}
	return checkText("why_not", o.WhyNot, MaxReasonBytes)
}

// Validate checks a grant as listed or revoked: its id, a standing scope
// with the session or agent it belongs to, the tool, teams and approvers.
func (g *Grant) Validate() error {
	if err := checkToken("id", g.ID); err != nil {
		return err
	}
	switch g.Scope {
	case ScopeSession:
		if err := checkToken("session_id", g.SessionID); err != nil {
			return err
		}
	case ScopeAlways, ScopeAlwaysPrefix:
		if err := checkToken("agent_id", g.AgentID); err != nil {
			return err
		}
	default:
		return enumError("scope", string(g.Scope), "session, always or always_prefix")
	}
	if err := checkIdent("tool", g.Tool, MaxToolBytes, true); err != nil {
		return err
	}
	for i, t := range g.Teams {
		if err := checkToken("teams["+strconv.Itoa(i)+"]", t); err != nil {
			return err
		}
	}
	for i := range g.Approvers {
		if err := g.Approvers[i].validate(); err != nil {
			return nested("approvers["+strconv.Itoa(i)+"]", err)
		}
	}
	if err := checkOptionalToken("request_id", g.RequestID); err != nil {
		return err
	}
	if g.CreatedAt.IsZero() && !g.Legacy {
		return &FieldError{Field: "created_at", Problem: "must be set"}
	}
	return nil
}

// Validate checks the grants an admin reply carries.
func (r *AdminReply) Validate() error {
	for i := range r.Grants {
		if err := r.Grants[i].Validate(); err != nil {
			return nested("grants["+strconv.Itoa(i)+"]", err)
		}
	}
	if r.Grant != nil {
		if err := r.Grant.Validate(); err != nil {
			return nested("grant", err)
		}
	}
	return nil
}

// Validate checks a grant's audit record.
func (e *GrantEvent) Validate() error {
	if e.Type != TypeGrantEvent {
		return enumError("type", e.Type, TypeGrantEvent)
	}
	switch e.Event {
	case GrantCreated, GrantRevoked, GrantExpired:
	default:
		return enumError("event", string(e.Event), "created, revoked or expired")
	}
	if err := checkToken("session_id", e.SessionID); err != nil {
		return err
	}
	if err := checkOptionalToken("request_id", e.RequestID); err != nil {
		return err
	}
	if err := e.Grant.Validate(); err != nil {
		return nested("grant", err)
	}
	return nil
}

// Approvals returns how many distinct approvals the question needs: at
// least 1 (0 on the wire means 1).
func (a *ApprovalNeeded) Approvals() int { return max(a.ApprovalsRequired, 1) }

// Validate checks a resolution as an approver device receives it.
func (r *Resolved) Validate() error {
	if r.Type != TypeResolved {
		return enumError("type", r.Type, TypeResolved)
	}
	if err := checkRequestSession(r.RequestID, r.SessionID); err != nil {
		return err
	}
	if err := checkToken("team", r.Team); err != nil {
		return err
	}
	if !r.State.Final() || !r.State.Valid() {
		return enumError("state", string(r.State), "a final state")
	}
	return checkDecisionOf("decision", &r.Decision, r.RequestID)
}

// Validate checks the broker's reply to a response. State may be empty when
// the response was refused before its request was found.
func (r *RespondReply) Validate() error {
	if r.State != "" && !r.State.Valid() {
		return enumError("state", string(r.State), "a known state")
	}
	if r.Decision != nil {
		if err := r.Decision.Validate(); err != nil {
			return nested("decision", err)
		}
	}
	return nil
}

// Validate checks every question of the reply.
func (r *PendingReply) Validate() error {
	for i := range r.Questions {
		if err := r.Questions[i].Validate(); err != nil {
			return nested("questions["+strconv.Itoa(i)+"]", err)
		}
	}
	return nil
}

// Validate checks that the cancelled ids are subject tokens.
func (r *CancelReply) Validate() error {
	for i, id := range r.Cancelled {
		if err := checkToken("cancelled["+strconv.Itoa(i)+"]", id); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the request and the decision of an audit record.
func (a *AuditRecord) Validate() error {
	if err := a.Request.Validate(); err != nil {
		return nested("request", err)
	}
	return checkDecisionOf("decision", &a.Decision, a.Request.RequestID)
}

// The check functions below return a nil error (never a typed nil pointer)
// on success and do not allocate then: they run for every request.

func checkToken(field, v string) error {
	if p := tokenProblem(v); p != "" {
		fe := withValue(field, v, p)
		fe.Err = &TokenError{What: field, Value: v, Problem: p}
		return fe
	}
	return nil
}

// checkRequestSession checks the ids that name a request: request_id and
// session_id, both subject tokens.
func checkRequestSession(requestID, sessionID string) error {
	if err := checkToken("request_id", requestID); err != nil {
		return err
	}
	return checkToken("session_id", sessionID)
}

// checkOptionalToken is checkToken for a field that may be empty.
func checkOptionalToken(field, v string) error {
	if v == "" {
		return nil
	}
	return checkToken(field, v)
}

// firstError returns the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTokens checks a list of subject tokens: at most most of them (what
// names them in the error: "ids", "teams"), each a token.
func checkTokens(field string, vs []string, most int, what string) error {
	if len(vs) > most {
		return &FieldError{Field: field, Problem: "must hold at most " + strconv.Itoa(most) +
			" " + what + ", got " + strconv.Itoa(len(vs))}
	}
	for i, v := range vs {
		if err := checkToken(field+"["+strconv.Itoa(i)+"]", v); err != nil {
			return err
		}
	}
	return nil
}

// checkIdent checks an identifier that is not a subject token: bounded,
// printable, no whitespace ('.', '*' and '>' are fine).
func checkIdent(field, v string, maxBytes int, required bool) error {
	switch {
	case v == "" && required:
		return &FieldError{Field: field, Problem: "must not be empty"}
	case v == "":
		return nil
	case len(v) > maxBytes:
		return withValue(field, v, "must be at most "+strconv.Itoa(maxBytes)+" bytes, got "+strconv.Itoa(len(v)))
	}
	if p := charProblem(v, false); p != "" {
		return withValue(field, v, p)
	}
	return nil
}

// checkText checks free text shown to humans: bounded, valid UTF-8, no
// control characters but tab and newlines (a terminal approver would run
// escape sequences), no bidi overrides (they make text read differently than
// it is).
func checkText(field, v string, maxBytes int) error { return checkTextLines(field, v, maxBytes, true) }

// checkLine is checkText for single-line text (names, labels).
func checkLine(field, v string, maxBytes int) error { return checkTextLines(field, v, maxBytes, false) }

// checkTextLines is checkText, or checkLine when multiline is false.
func checkTextLines(field, v string, maxBytes int, multiline bool) error {
	if len(v) > maxBytes {
		return &FieldError{Field: field, Problem: "must be at most " + strconv.Itoa(maxBytes) +
			" bytes, got " + strconv.Itoa(len(v))}
	}
	if p := textProblem(v, multiline); p != "" {
		return &FieldError{Field: field, Problem: p}
	}
	return nil
}

func textProblem(v string, multiline bool) string {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if multiline && (c == '\t' || c == '\n' || c == '\r') {
					i++
					continue
				}
				return "must not contain control characters (found " + runeName(rune(c)) +
					" at byte " + strconv.Itoa(i) + ")"
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return "must be valid UTF-8 (bad byte at " + strconv.Itoa(i) + ")"
		case r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return "must not contain control or bidi override characters (found " + runeName(r) +
				" at byte " + strconv.Itoa(i) + ")"
		}
		i += size
	}
	return ""
}

func runeName(r rune) string {
	s := strconv.FormatInt(int64(r), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return "U+" + s
}

// checkUpdatedArguments checks an approval's edited arguments: when
// present, a JSON object of at most [MaxUpdatedArgumentsBytes].
func checkUpdatedArguments(raw []byte) error {
	if len(raw) > MaxUpdatedArgumentsBytes {
		return &FieldError{Field: "updated_arguments", Problem: "must be at most " + strconv.Itoa(MaxUpdatedArgumentsBytes) +
			" bytes, got " + strconv.Itoa(len(raw))}
	}
	if err := checkObject("updated_arguments", raw); err != nil || len(raw) == 0 {
		return err
	}
	return checkEditedKeys(raw)
}

// checkEditedKeys refuses edited arguments that repeat a top-level key or
// hold two keys that differ only in case ("command" and "Command"): the
// policy judges one value, a host may run the other. An approver's edit
// never needs either; an agent's request may hold them, and the approver
// card flags them.
func checkEditedKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return &FieldError{Field: "updated_arguments", Problem: "must be a JSON object"}
	}
	seen := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return &FieldError{Field: "updated_arguments", Problem: "is not valid JSON: " + err.Error()}
		}
		k, _ := t.(string)
		if prev, ok := seen[strings.ToLower(k)]; ok {
			if prev == k {
				return &FieldError{Field: "updated_arguments", Problem: "repeat the key " + strconv.Quote(k) + " (the policy would judge one value, a host might run another)"}
			}
			return &FieldError{Field: "updated_arguments", Problem: "hold keys " + strconv.Quote(prev) + " and " + strconv.Quote(k) + ", which differ only in case (a host may read either)"}
		}
		seen[strings.ToLower(k)] = k
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return &FieldError{Field: "updated_arguments", Problem: "is not valid JSON: " + err.Error()}
		}
	}
	return nil
}

// checkObject checks that raw, when present, is a JSON object.
func checkObject(field string, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	i, j := 0, len(raw)
	for i < j && isJSONSpace(raw[i]) {
		i++
	}
	for j > i && isJSONSpace(raw[j-1]) {
		j--
	}
	if i == j {
		return &FieldError{Field: field, Problem: "must be a JSON object or omitted, got empty JSON"}
	}
	if raw[i] != '{' || raw[j-1] != '}' {
		return &FieldError{Field: field, Problem: "must be a JSON object or omitted, got " + jsonValueKind(raw[i])}
	}
	return nil
}

func withValue(field, v, problem string) *FieldError {
	if v != "" {
		problem += ", got " + quoteShort(v)
	}
	return &FieldError{Field: field, Problem: problem}
}

func enumError(field, v, want string) error {
	if v == "" {
		return &FieldError{Field: field, Problem: "must be " + want + ", got nothing"}
	}
	return &FieldError{Field: field, Problem: "must be " + want + ", got " + quoteShort(v)}
}

// nested prefixes the field of a *FieldError with the path of its parent.
func nested(parent string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: parent + "." + fe.Field, Problem: fe.Problem, Err: fe.Err}
	}
	return err
}

// checkCwd checks a working directory: empty (unknown), or an absolute,
// clean path without control characters, at most MaxCwdBytes long. A
// relative or unclean one would make the policy resolve paths somewhere
// else than the agent does.
func checkCwd(field, v string) error {
	if v == "" {
		return nil
	}
	if err := checkLine(field, v, MaxCwdBytes); err != nil {
		return err
	}
	switch {
	case !path.IsAbs(v):
		return &FieldError{Field: field, Problem: "must be an absolute path, got " + strconv.Quote(v)}
	case path.Clean(v) != v:
		return &FieldError{Field: field, Problem: "must be a clean path (no ., .., // or trailing /), got " +
			strconv.Quote(v) + "; did you mean " + strconv.Quote(path.Clean(v)) + "?"}
	}
	return nil
}

// checkHome checks an agent's home directory: a working directory (checkCwd)
// other than / and without the characters a policy's patterns read as globs
// (* ? [ ] { } \ !), since the policy puts it where its patterns say ~.
func checkHome(v string) error {
	if err := checkCwd("home", v); err != nil {
		return err
	}
	switch {
	case v == "/":
		return &FieldError{Field: "home", Problem: "must not be /: a home of / would make ~/.ssh/** mean /.ssh/**"}
	case strings.ContainsAny(v, "*?[]{}\\!,"):
		return &FieldError{Field: "home", Problem: "must not hold glob characters (* ? [ ] { } \\ ! and the comma of a brace group), got " + strconv.Quote(v)}
	}
	return nil
}
