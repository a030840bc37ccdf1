package messages

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// checkFieldError asserts that err is nil when wantField is empty, and
// otherwise a *FieldError on wantField whose problem contains wantProblem.
func checkFieldError(t *testing.T, err error, wantField, wantProblem string) {
	t.Helper()
	if wantField == "" {
		if err != nil {
			t.Fatalf("Validate = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate = %v, want an error wrapping ErrInvalid", err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("Validate = %v (%T), want a *FieldError", err, err)
	}
	if fe.Field != wantField {
		t.Errorf("field = %q, want %q (error: %v)", fe.Field, wantField, err)
	}
	if !strings.Contains(fe.Problem, wantProblem) {
		t.Errorf("problem = %q, want it to contain %q", fe.Problem, wantProblem)
	}
}

func TestRequestValidate(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(r *Request)
		wantField   string
		wantProblem string
	}{
		{"a complete request is valid", func(r *Request) {}, "", ""},
		{"a minimal request is valid", func(r *Request) {
			*r = Request{V: 1, RequestID: "r", SessionID: "s", AgentID: "a", Tool: "read_file"}
		}, "", ""},
		{"a request id is required", func(r *Request) { r.RequestID = "" }, "request_id", "must not be empty"},
		{"a request id with a dot is not a token", func(r *Request) { r.RequestID = "a.b" }, "request_id", "single subject token"},
		{"a session id is required", func(r *Request) { r.SessionID = "" }, "session_id", "must not be empty"},
		{"a session id with a wildcard is not a token", func(r *Request) { r.SessionID = "*" }, "session_id", "single subject token"},
		{"a session id with a space is not a token", func(r *Request) { r.SessionID = "a b" }, "session_id", "single subject token"},
		{"an agent id is required", func(r *Request) { r.AgentID = "" }, "agent_id", "must not be empty"},
		{"an agent id with > is not a token", func(r *Request) { r.AgentID = "pod>" }, "agent_id", "single subject token"},
		{"a 129-byte agent id is too long", func(r *Request) { r.AgentID = strings.Repeat("a", 129) }, "agent_id", "at most 128 bytes, got 129"},
		{"a tool is required", func(r *Request) { r.Tool = "" }, "tool", "must not be empty"},
		{"a tool may contain dots", func(r *Request) { r.Tool = "github.create_issue" }, "", ""},
		{"an MCP tool name is fine", func(r *Request) { r.Tool = "mcp__github__create_issue" }, "", ""},
		{"a tool with whitespace is rejected", func(r *Request) { r.Tool = "rm -rf" }, "tool", "must not contain whitespace"},
		{"a tool with a newline is rejected", func(r *Request) { r.Tool = "bash\n" }, "tool", "must not contain whitespace"},
		{"a tool with a control character is rejected", func(r *Request) { r.Tool = "ba\x00sh" }, "tool", "control characters"},
		{"a tool with a zero-width space is rejected", func(r *Request) { r.Tool = "ba\u200bsh" }, "tool", "invisible"},
		{"a tool over 128 bytes is rejected", func(r *Request) { r.Tool = strings.Repeat("t", 129) }, "tool", "at most 128 bytes"},
		{"a tool of exactly 128 bytes is fine", func(r *Request) { r.Tool = strings.Repeat("t", 128) }, "", ""},
		{"a tool with invalid UTF-8 is rejected", func(r *Request) { r.Tool = "b\xffsh" }, "tool", "valid UTF-8"},
		{"an empty category is fine", func(r *Request) { r.Category = "" }, "", ""},
		{"each known category is fine", func(r *Request) { r.Category = CategoryMCP }, "", ""},
		{"an unknown category is rejected", func(r *Request) { r.Category = "info" }, "category", `got "info"`},
		{"absent arguments are fine", func(r *Request) { r.Arguments = nil }, "", ""},
		{"an empty object is fine", func(r *Request) { r.Arguments = json.RawMessage(` {} `) }, "", ""},
		{"array arguments are rejected", func(r *Request) { r.Arguments = json.RawMessage(`["ls"]`) }, "arguments", "got an array"},
		{"string arguments are rejected", func(r *Request) { r.Arguments = json.RawMessage(`"{\"command\":\"ls\"}"`) }, "arguments", "got a string"},
		{"null arguments are rejected", func(r *Request) { r.Arguments = json.RawMessage(`null`) }, "arguments", "got null"},
		{"number arguments are rejected", func(r *Request) { r.Arguments = json.RawMessage(`3`) }, "arguments", "got a number"},
		{"a description of 4 KiB is fine", func(r *Request) { r.Description = strings.Repeat("d", 4096) }, "", ""},
		{"a description over 4 KiB is rejected", func(r *Request) { r.Description = strings.Repeat("d", 4097) }, "description", "at most 4096 bytes"},
		{"a description may have several lines", func(r *Request) { r.Description = "line 1\nline 2\r\n\tindented" }, "", ""},
		{"a description with a terminal escape is rejected", func(r *Request) { r.Description = "hi\x1b[2J" }, "description", "U+001b"},
		{"a description with a bidi override is rejected", func(r *Request) { r.Description = "safe \u202e txt.exe" }, "description", "bidi"},
		{"a description with a C1 control is rejected", func(r *Request) { r.Description = "a\u0085b" }, "description", "U+0085"},
		{"an absolute clean cwd is fine", func(r *Request) { r.Cwd = "/home/dev/project" }, "", ""},
		{"the root is a clean cwd", func(r *Request) { r.Cwd = "/" }, "", ""},
		{"an empty cwd means unknown", func(r *Request) { r.Cwd = "" }, "", ""},
		{"a relative cwd is rejected", func(r *Request) { r.Cwd = "project" }, "cwd", "absolute path"},
		{"a cwd with .. is rejected", func(r *Request) { r.Cwd = "/home/dev/../root" }, "cwd", `did you mean "/home/root"`},
		{"a cwd with a trailing slash is rejected", func(r *Request) { r.Cwd = "/home/dev/" }, "cwd", "clean path"},
		{"a cwd with a newline is rejected", func(r *Request) { r.Cwd = "/home/dev\n/x" }, "cwd", "control characters"},
		{"a cwd with a NUL is rejected", func(r *Request) { r.Cwd = "/home\x00" }, "cwd", "control characters"},
		{"a cwd over 4096 bytes is rejected", func(r *Request) { r.Cwd = "/" + strings.Repeat("d", 4096) }, "cwd", "at most 4096 bytes"},
		{"an absolute clean home is fine", func(r *Request) { r.Home = "/home/dev" }, "", ""},
		{"a relative home is rejected", func(r *Request) { r.Home = "dev" }, "home", "absolute path"},
		{"an unclean home is rejected", func(r *Request) { r.Home = "/home/dev/" }, "home", "clean path"},
		{"the root as home is rejected", func(r *Request) { r.Home = "/" }, "home", "must not be /"},
		{"a home with a glob is rejected", func(r *Request) { r.Home = "/home/*" }, "home", "glob characters"},
		{"a home with a brace is rejected", func(r *Request) { r.Home = "/home/{a,b}" }, "home", "glob characters"},
		{"a home with a comma is rejected", func(r *Request) { r.Home = "/home/a,b" }, "home", "glob characters"},
		{"a description in another script is fine", func(r *Request) { r.Description = "Установить зависимости — 依存関係" }, "", ""},
		{"a batch item needs a tool", func(r *Request) { r.BatchRemaining[1].Tool = "" }, "batch_remaining[1].tool", "must not be empty"},
		{"a batch item without arguments is fine", func(r *Request) { r.BatchRemaining[0].Arguments = nil }, "", ""},
		{"a batch item with string arguments is rejected", func(r *Request) {
			r.BatchRemaining[0].Arguments = json.RawMessage(`"{...}"`)
		}, "batch_remaining[0].arguments", "got a string"},
		{"a zero ttl means the policy default", func(r *Request) { r.TTLMillis = 0 }, "", ""},
		{"a negative ttl is rejected", func(r *Request) { r.TTLMillis = -1 }, "ttl_ms", "must not be negative, got -1"},
		{"an agent type with whitespace is rejected", func(r *Request) { r.AgentType = "code reviewer" }, "agent_type", "whitespace"},
		{"an agent type over 128 bytes is rejected", func(r *Request) { r.AgentType = strings.Repeat("x", 129) }, "agent_type", "at most 128"},
		{"requested_by over 128 bytes is rejected", func(r *Request) { r.RequestedBy = strings.Repeat("x", 129) }, "requested_by", "at most 128"},
		{"an email as requested_by is fine", func(r *Request) { r.RequestedBy = "alice@example.com" }, "", ""},
		{"a call id with a tab is rejected", func(r *Request) { r.CallID = "call\t1" }, "call_id", "whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRequest()
			tt.mutate(r)
			checkFieldError(t, r.Validate(), tt.wantField, tt.wantProblem)
		})
	}
}

func TestResponseValidate(t *testing.T) {
	tests := []struct {
		name        string
		msg         func() *Response
		mutate      func(r *Response)
		wantField   string
		wantProblem string
	}{
		{"a complete approval is valid", validResponse, func(r *Response) {}, "", ""},
		{"a complete rejection is valid", validRejection, func(r *Response) {}, "", ""},
		{"an approval without scope is valid", validResponse, func(r *Response) { r.Scope = "" }, "", ""},
		{"a rejection without mode is valid", validRejection, func(r *Response) { r.RejectMode = "" }, "", ""},
		{"a request id is required", validResponse, func(r *Response) { r.RequestID = "" }, "request_id", "must not be empty"},
		{"a request id must be a token", validResponse, func(r *Response) { r.RequestID = "r>" }, "request_id", "single subject token"},
		{"a session id must be a token", validResponse, func(r *Response) { r.SessionID = "s.1" }, "session_id", "single subject token"},
		{"an approver id is required", validResponse, func(r *Response) { r.Approver.ID = "" }, "approver.id", "must not be empty"},
		{"an approver id with whitespace is rejected", validResponse, func(r *Response) { r.Approver.ID = "bob smith" }, "approver.id", "whitespace"},
		{"an approver display with a newline is rejected", validResponse, func(r *Response) { r.Approver.Display = "Bob\nAdmin" }, "approver.display", "control characters"},
		{"an approver display with spaces is fine", validResponse, func(r *Response) { r.Approver.Display = "Bob J. Ng" }, "", ""},
		{"an approver channel with whitespace is rejected", validResponse, func(r *Response) { r.Approver.Channel = "we b" }, "approver.channel", "whitespace"},
		{"an approver device over 256 bytes is rejected", validResponse, func(r *Response) {
			r.Approver.Device = strings.Repeat("d", 257)
		}, "approver.device", "at most 256"},
		{"an unknown scope is rejected", validResponse, func(r *Response) { r.Scope = "forever" }, "scope", `got "forever"`},
		{"every known scope is accepted", validResponse, func(r *Response) { r.Scope = ScopeAlwaysPrefix }, "", ""},
		{"an unknown reject mode is rejected", validRejection, func(r *Response) { r.RejectMode = "reject" }, "reject_mode", `got "reject"`},
		{"a scope on a rejection is rejected", validRejection, func(r *Response) { r.Scope = ScopeSession }, "scope", "only to approvals"},
		{"scope once on a rejection is rejected too", validRejection, func(r *Response) { r.Scope = ScopeOnce }, "scope", "only to approvals"},
		{"a reject mode on an approval is rejected", validResponse, func(r *Response) { r.RejectMode = RejectHard }, "reject_mode", "only to rejections"},
		{"an answer on a rejection is rejected", validRejection, func(r *Response) { r.Answer = json.RawMessage(`"x"`) }, "answer", "only to approvals"},
		{"feedback over 4 KiB is rejected", validRejection, func(r *Response) { r.Feedback = strings.Repeat("f", 4097) }, "feedback", "at most 4096"},
		{"multi-line feedback is fine", validRejection, func(r *Response) { r.Feedback = "no:\n- use yarn" }, "", ""},
		{"feedback with an escape sequence is rejected", validRejection, func(r *Response) { r.Feedback = "\x1b]0;pwn\x07" }, "feedback", "control characters"},
		{"a signature with whitespace is rejected", validResponse, func(r *Response) { r.Signature = "abc def" }, "signature", "whitespace"},
		{"an approval with changes is valid", validEditedResponse, func(r *Response) {}, "", ""},
		{"edited arguments on a rejection are rejected", validRejection, func(r *Response) { r.UpdatedArguments = json.RawMessage(`{"command":"ls"}`) }, "updated_arguments", "only to approvals"},
		{"edited arguments that are an array are rejected", validEditedResponse, func(r *Response) { r.UpdatedArguments = json.RawMessage(`["ls"]`) }, "updated_arguments", "JSON object"},
		{"edited arguments that are a string are rejected", validEditedResponse, func(r *Response) { r.UpdatedArguments = json.RawMessage(`"ls"`) }, "updated_arguments", "JSON object"},
		{"edited arguments that are null are rejected", validEditedResponse, func(r *Response) { r.UpdatedArguments = json.RawMessage(`null`) }, "updated_arguments", "JSON object"},
		{"edited arguments over 32 KiB are rejected", validEditedResponse, func(r *Response) {
			r.UpdatedArguments = json.RawMessage(`{"content":"` + strings.Repeat("a", MaxUpdatedArgumentsBytes) + `"}`)
		}, "updated_arguments", "at most 32768 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.msg()
			tt.mutate(r)
			checkFieldError(t, r.Validate(), tt.wantField, tt.wantProblem)
		})
	}
}

func TestResponseEffectiveScopeAndRejectMode(t *testing.T) {
	tests := []struct {
		name      string
		resp      Response
		wantScope Scope
		wantMode  RejectMode
	}{
		{"an approval without scope approves once", Response{Approved: true}, ScopeOnce, ""},
		{"an approval keeps its scope", Response{Approved: true, Scope: ScopeAlways}, ScopeAlways, ""},
		{"a rejection without mode is hard", Response{}, "", RejectHard},
		{"a rejection keeps its mode", Response{RejectMode: RejectSoft}, "", RejectSoft},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.resp.EffectiveScope(); got != tt.wantScope {
				t.Errorf("EffectiveScope = %q, want %q", got, tt.wantScope)
			}
			if got := tt.resp.EffectiveRejectMode(); got != tt.wantMode {
				t.Errorf("EffectiveRejectMode = %q, want %q", got, tt.wantMode)
			}
		})
	}
}

func TestAgentRequestsValidate(t *testing.T) {
	tests := []struct {
		name        string
		msg         interface{ Validate() error }
		wantField   string
		wantProblem string
	}{
		{"a status request with an id is valid", &StatusRequest{V: 1, RequestID: "r-1"}, "", ""},
		{"a status request needs an id", &StatusRequest{V: 1}, "request_id", "must not be empty"},
		{"a status request id must be a token", &StatusRequest{V: 1, RequestID: "r 1"}, "request_id", "single subject token"},
		{"a cancel request without ids cancels all", &CancelRequest{V: 1}, "", ""},
		{"a cancel request with ids is valid", &CancelRequest{V: 1, RequestIDs: []string{"a", "b"}, Reason: "shutdown"}, "", ""},
		{"a cancel request id must be a token", &CancelRequest{V: 1, RequestIDs: []string{"a", "b.c"}}, "request_ids[1]", "single subject token"},
		{"a cancel request with too many ids is rejected", &CancelRequest{V: 1, RequestIDs: make([]string, MaxCancelIDs+1)}, "request_ids", "at most 1000"},
		{"a cancel reason over 1 KiB is rejected", &CancelRequest{V: 1, Reason: strings.Repeat("r", 1025)}, "reason", "at most 1024"},
		{"a turn request is valid", &TurnRequest{V: 1}, "", ""},
		{"a pending request is valid", &PendingRequest{V: 1}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFieldError(t, tt.msg.Validate(), tt.wantField, tt.wantProblem)
		})
	}
}

func TestAdminRequestValidateOp(t *testing.T) {
	tests := []struct {
		name        string
		op          string
		req         AdminRequest
		wantField   string
		wantProblem string
	}{
		{"set_mode on a session is valid", AdminOpSetMode, AdminRequest{SessionID: "s", Mode: ModeYolo}, "", ""},
		{"set_mode on an agent type is valid", AdminOpSetMode, AdminRequest{AgentType: "coder", Mode: ModeAlwaysAsk}, "", ""},
		{"set_mode with an empty mode clears the override", AdminOpSetMode, AdminRequest{SessionID: "s"}, "", ""},
		{"set_mode needs a target", AdminOpSetMode, AdminRequest{Mode: ModeYolo}, "session_id", "exactly one"},
		{"set_mode takes only one target", AdminOpSetMode, AdminRequest{SessionID: "s", AgentType: "coder", Mode: ModeYolo}, "session_id", "exactly one"},
		{"set_mode does not take an agent id", AdminOpSetMode, AdminRequest{SessionID: "s", AgentID: "a", Mode: ModeYolo}, "agent_id", "not an agent id"},
		{"an unknown mode is rejected", AdminOpSetMode, AdminRequest{SessionID: "s", Mode: "write"}, "mode", `got "write"`},
		{"a session id must be a token", AdminOpSetMode, AdminRequest{SessionID: "s.*", Mode: ModeYolo}, "session_id", "single subject token"},
		{"revoke_grants of a session is valid", AdminOpRevokeGrants, AdminRequest{SessionID: "s"}, "", ""},
		{"revoke_grants of an agent is valid", AdminOpRevokeGrants, AdminRequest{AgentID: "a"}, "", ""},
		{"revoke_grants needs a target", AdminOpRevokeGrants, AdminRequest{}, "session_id", "needs session_id, agent_id or both"},
		{"revoke_grants does not take a mode", AdminOpRevokeGrants, AdminRequest{AgentID: "a", Mode: ModeYolo}, "mode", "only session_id and agent_id"},
		{"reload_policy without fields is valid", AdminOpReloadPolicy, AdminRequest{V: 1}, "", ""},
		{"reload_policy with a field is rejected", AdminOpReloadPolicy, AdminRequest{AgentID: "a"}, "agent_id", "no fields"},
		{"revoke_grants does not take a grant id", AdminOpRevokeGrants, AdminRequest{SessionID: "s", GrantID: "g"}, "grant_id", "only session_id and agent_id"},
		{"revoke_grants is not for approvers", AdminOpRevokeGrants, AdminRequest{SessionID: "s", By: "alice"}, "by", "only session_id and agent_id"},
		{"list_grants without filters is valid", AdminOpListGrants, AdminRequest{}, "", ""},
		{"list_grants by teams for an approver is valid", AdminOpListGrants, AdminRequest{Teams: []string{"oncall"}, By: "alice", SessionID: "s", AgentID: "a"}, "", ""},
		{"list_grants does not take a grant id", AdminOpListGrants, AdminRequest{GrantID: "g"}, "grant_id", "only session_id, agent_id, teams and by"},
		{"list_grants teams must be tokens", AdminOpListGrants, AdminRequest{Teams: []string{"on call"}}, "teams[0]", "single subject token"},
		{"list_grants by must be an identifier", AdminOpListGrants, AdminRequest{By: "al ice"}, "by", "whitespace"},
		{"revoke_grant by id is valid", AdminOpRevokeGrant, AdminRequest{GrantID: "gr_01", By: "alice"}, "", ""},
		{"revoke_grant needs the id", AdminOpRevokeGrant, AdminRequest{By: "alice"}, "grant_id", "needs the grant's id"},
		{"revoke_grant does not take a session", AdminOpRevokeGrant, AdminRequest{GrantID: "g", SessionID: "s"}, "session_id", "only grant_id and by"},
		{"revoke_grant does not take teams", AdminOpRevokeGrant, AdminRequest{GrantID: "g", Teams: []string{"x"}}, "teams", "only grant_id and by"},
		{"a grant id must be a token", AdminOpRevokeGrant, AdminRequest{GrantID: "g.>"}, "grant_id", "single subject token"},
		{"reload_policy with by is rejected", AdminOpReloadPolicy, AdminRequest{By: "alice"}, "by", "no fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFieldError(t, tt.req.ValidateOp(tt.op), tt.wantField, tt.wantProblem)
		})
	}
	t.Run("an unknown op is rejected", func(t *testing.T) {
		err := (&AdminRequest{}).ValidateOp("drop_all")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown admin op "drop_all"`) {
			t.Errorf("ValidateOp = %v, want unknown admin op", err)
		}
	})
}

func TestDecisionValidate(t *testing.T) {
	tests := []struct {
		name        string
		msg         func() *Decision
		mutate      func(d *Decision)
		wantField   string
		wantProblem string
	}{
		{"an approval is valid", validDecision, func(d *Decision) {}, "", ""},
		{"a rejection is valid", validDenyDecision, func(d *Decision) {}, "", ""},
		{"an unknown outcome is rejected", validDecision, func(d *Decision) { d.Outcome = "ask" }, "outcome", "allow or deny"},
		{"an empty outcome is rejected", validDecision, func(d *Decision) { d.Outcome = "" }, "outcome", "got nothing"},
		{"a reason code is required", validDecision, func(d *Decision) { d.ReasonCode = "" }, "reason_code", "must not be empty"},
		{"an unknown reason code is accepted", validDecision, func(d *Decision) { d.ReasonCode = "quorum_reached" }, "", ""},
		{"a deny code on an allow is rejected", validDecision, func(d *Decision) { d.ReasonCode = ReasonTimeout }, "reason_code", "goes with outcome deny"},
		{"an allow code on a deny is rejected", validDenyDecision, func(d *Decision) { d.ReasonCode = ReasonCascade }, "reason_code", "goes with outcome allow"},
		{"a scope on a deny is rejected", validDenyDecision, func(d *Decision) { d.Scope = ScopeOnce }, "scope", "only to outcome allow"},
		{"a reject mode on an allow is rejected", validDecision, func(d *Decision) { d.RejectMode = RejectSoft }, "reject_mode", "only to outcome deny"},
		{"an unknown scope is rejected", validDecision, func(d *Decision) { d.Scope = "global" }, "scope", `got "global"`},
		{"a decider kind is required", validDecision, func(d *Decision) { d.DecidedBy.Kind = "" }, "decided_by.kind", "must not be empty"},
		{"a decision time is required", validDecision, func(d *Decision) { d.DecidedAt = time.Time{} }, "decided_at", "must be set"},
		{"a session id must be a token", validDecision, func(d *Decision) { d.SessionID = ">" }, "session_id", "single subject token"},
		{"an approval with changes is valid", validEditedDecision, func(d *Decision) {}, "", ""},
		{"edited arguments on a deny are rejected", validDenyDecision, func(d *Decision) { d.UpdatedArguments = json.RawMessage(`{"command":"ls"}`) }, "updated_arguments", "only to outcome allow"},
		{"edited arguments that are not an object are rejected", validEditedDecision, func(d *Decision) { d.UpdatedArguments = json.RawMessage(`[1]`) }, "updated_arguments", "JSON object"},
		{"edited arguments over 32 KiB are rejected", validEditedDecision, func(d *Decision) {
			d.UpdatedArguments = json.RawMessage(`{"content":"` + strings.Repeat("a", MaxUpdatedArgumentsBytes) + `"}`)
		}, "updated_arguments", "at most 32768 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.msg()
			tt.mutate(d)
			checkFieldError(t, d.Validate(), tt.wantField, tt.wantProblem)
		})
	}
}

func TestBrokerMessagesValidate(t *testing.T) {
	tests := []struct {
		name        string
		msg         func() interface{ Validate() error }
		wantField   string
		wantProblem string
	}{
		{"a final receipt is valid", func() interface{ Validate() error } { return validReceipt() }, "", ""},
		{"a pending receipt is valid", func() interface{ Validate() error } { return validPendingReceipt() }, "", ""},
		{"a pending receipt needs an expiry", func() interface{ Validate() error } {
			r := validPendingReceipt()
			r.ExpiresAt = time.Time{}
			return r
		}, "expires_at", "must be set"},
		{"a pending receipt carries no decision", func() interface{ Validate() error } {
			r := validPendingReceipt()
			r.Decision = validDecision()
			return r
		}, "decision", "must be absent"},
		{"a final receipt needs a decision", func() interface{ Validate() error } {
			r := validReceipt()
			r.Decision = nil
			return r
		}, "decision", "must be present"},
		{"a receipt's decision is validated", func() interface{ Validate() error } {
			r := validReceipt()
			r.Decision.Outcome = "maybe"
			return r
		}, "decision.outcome", "allow or deny"},
		{"a receipt's decision is for its request", func() interface{ Validate() error } {
			r := validReceipt()
			r.Decision.RequestID = "other"
			return r
		}, "decision.request_id", `got "other"`},
		{"a receipt with an unknown state is rejected", func() interface{ Validate() error } {
			r := validReceipt()
			r.State = "waiting"
			return r
		}, "state", `got "waiting"`},
		{"a question is valid", func() interface{ Validate() error } { return validApprovalNeeded() }, "", ""},
		{"a question needs its type", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.Type = "ask"
			return a
		}, "type", "approval_needed"},
		{"a question's request is validated", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.Request.Tool = ""
			return a
		}, "request.tool", "must not be empty"},
		{"a question's team must be a token", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.Team = "on call"
			return a
		}, "team", "single subject token"},
		{"a question needs an expiry", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.ExpiresAt = time.Time{}
			return a
		}, "expires_at", "must be set"},
		{"a question needs a risk tier", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.Risk.Tier = ""
			return a
		}, "risk.tier", "must not be empty"},
		{"a question's always grant is always or always_prefix", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.Always.Scope = ScopeSession
			return a
		}, "always.scope", `got "session"`},
		{"a question's batch is validated", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.BatchRemaining = []BatchItem{{Tool: "x", Arguments: json.RawMessage(`[]`)}}
			return a
		}, "batch_remaining[0].arguments", "got an array"},
		{"a negative approval count is rejected", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.ApprovalsRequired = -1
			return a
		}, "approvals_required", "must not be negative"},
		{"a resolution is valid", func() interface{ Validate() error } { return validResolved() }, "", ""},
		{"a resolution needs a final state", func() interface{ Validate() error } {
			r := validResolved()
			r.State = StatePending
			return r
		}, "state", "a final state"},
		{"a resolution's decision is for its request", func() interface{ Validate() error } {
			r := validResolved()
			r.RequestID = "other"
			return r
		}, "decision.request_id", "must be the request's id"},
		{"a respond reply is valid", func() interface{ Validate() error } { return validRespondReply() }, "", ""},
		{"a refused respond reply may have no state", func() interface{ Validate() error } {
			return &RespondReply{V: 1, Reason: "not a member of team oncall"}
		}, "", ""},
		{"a pending reply's questions are validated", func() interface{ Validate() error } {
			a := validApprovalNeeded()
			a.Team = ""
			return &PendingReply{V: 1, Questions: []ApprovalNeeded{*validApprovalNeeded(), *a}}
		}, "questions[1].team", "must not be empty"},
		{"an audit record is valid", func() interface{ Validate() error } { return validAuditRecord() }, "", ""},
		{"a cancel reply's ids are tokens", func() interface{ Validate() error } {
			return &CancelReply{V: 1, Cancelled: []string{"a*"}}
		}, "cancelled[0]", "single subject token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFieldError(t, tt.msg().Validate(), tt.wantField, tt.wantProblem)
		})
	}
}

func TestApprovalsRequiredOfZeroMeansOne(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 3: 3} {
		if got := (&ApprovalNeeded{ApprovalsRequired: n}).Approvals(); got != want {
			t.Errorf("Approvals with approvals_required %d = %d, want %d", n, got, want)
		}
	}
}

func TestReasonCodesHaveOneOutcome(t *testing.T) {
	allow := []ReasonCode{ReasonPolicyAllow, ReasonModeAllow, ReasonScopeGrant, ReasonApproved, ReasonCascade}
	deny := []ReasonCode{ReasonPolicyDeny, ReasonRejected, ReasonHardStop, ReasonTimeout, ReasonCancelled, ReasonUnavailable}
	for want, codes := range map[Outcome][]ReasonCode{OutcomeAllow: allow, OutcomeDeny: deny} {
		for _, c := range codes {
			if got, ok := c.Outcome(); !ok || got != want {
				t.Errorf("%s.Outcome() = %q, %v; want %q", c, got, ok, want)
			}
		}
	}
	if n := len(allow) + len(deny); n != len(ReasonCodes()) {
		t.Errorf("ReasonCodes lists %d codes, the test knows %d", len(ReasonCodes()), n)
	}
	for _, c := range ReasonCodes() {
		if _, ok := c.Outcome(); !ok {
			t.Errorf("ReasonCodes lists %s, which has no outcome", c)
		}
	}
	if _, ok := ReasonCode("something_new").Outcome(); ok {
		t.Error("an unknown reason code reports an outcome")
	}
}

func TestFinalStatesHaveOneOutcomeAndOthersNone(t *testing.T) {
	tests := []struct {
		state State
		want  Outcome
		known bool
	}{
		{StateApproved, OutcomeAllow, true},
		{StateRejected, OutcomeDeny, true},
		{StateExpired, OutcomeDeny, true},
		{StateCancelled, OutcomeDeny, true},
		{StatePending, "", false},
		{StateDecided, "", false},
		{State("creating"), "", false},
	}
	for _, tc := range tests {
		if got, ok := tc.state.Outcome(); got != tc.want || ok != tc.known {
			t.Errorf("%s.Outcome() = %q, %v; want %q, %v", tc.state, got, ok, tc.want, tc.known)
		}
	}
}

func TestTokenFieldErrorsWrapTheTokenError(t *testing.T) {
	r := validRequest()
	r.SessionID = "a.b"
	err := r.Validate()
	var te *TokenError
	if !errors.Is(err, ErrInvalidToken) || !errors.As(err, &te) || te.What != "session_id" || te.Value != "a.b" {
		t.Errorf("Validate = %v, want a FieldError wrapping the TokenError of session_id", err)
	}
}

func TestBracesAreRefusedInTokens(t *testing.T) {
	for _, v := range []string{"a{b", "sess}", "{x}"} {
		err := ValidateToken("session_id", v)
		if err == nil || !strings.Contains(err.Error(), "'{' or '}'") {
			t.Errorf("ValidateToken(%q) = %v, want a brace error", v, err)
		}
	}
}

func TestRequestTTLSaturatesInsteadOfWrapping(t *testing.T) {
	tests := []struct {
		name string
		ms   int64
		want time.Duration
	}{
		{"none is zero (the policy's default)", 0, 0},
		{"a minute", 60_000, time.Minute},
		{"the largest value that fits", math.MaxInt64 / int64(time.Millisecond), time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond},
		{"one more saturates", math.MaxInt64/int64(time.Millisecond) + 1, math.MaxInt64},
		{"a value that wrapped to under a millisecond saturates", 18446744073710, math.MaxInt64},
		{"MaxInt64 saturates instead of going negative", math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Request{TTLMillis: tt.ms}
			if got := r.TTL(); got != tt.want {
				t.Errorf("TTL() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGrantOfferValidate(t *testing.T) {
	tests := []struct {
		name        string
		offer       GrantOffer
		wantField   string
		wantProblem string
	}{
		{"an offered session scope is valid", GrantOffer{Scope: ScopeSession, Offered: true, Tool: "bash", Patterns: []string{"npm install *"}}, "", ""},
		{"a refused always scope is valid", GrantOffer{Scope: ScopeAlways, WhyNot: "the rule asks every time"}, "", ""},
		{"an expiry as a duration is valid", GrantOffer{Scope: ScopeAlways, Offered: true, Tool: "bash", Expires: "720h0m0s"}, "", ""},
		{"never expiring is valid", GrantOffer{Scope: ScopeSession, Offered: true, Tool: "bash", Expires: ExpiresNever}, "", ""},
		{"an expiry that is no duration", GrantOffer{Scope: ScopeAlways, Offered: true, Tool: "bash", Expires: "soon"}, "offers[0].expires", "positive duration"},
		{"a negative expiry", GrantOffer{Scope: ScopeAlways, Offered: true, Tool: "bash", Expires: "-1h"}, "offers[0].expires", "positive duration"},
		{"an expiry on a refused scope", GrantOffer{Scope: ScopeAlways, WhyNot: "no", Expires: "1h"}, "offers[0].expires", "must be empty"},
		{"once is not a standing scope", GrantOffer{Scope: ScopeOnce, Offered: true, Tool: "bash"}, "offers[0].scope", "session, always or always_prefix"},
		{"an offer names its tool", GrantOffer{Scope: ScopeSession, Offered: true}, "offers[0].tool", "must not be empty"},
		{"an offer has no why_not", GrantOffer{Scope: ScopeSession, Offered: true, Tool: "bash", WhyNot: "x"}, "offers[0].why_not", "must be empty"},
		{"a refusal says why", GrantOffer{Scope: ScopeAlways}, "offers[0].why_not", "must say why"},
		{"a refusal grants no patterns", GrantOffer{Scope: ScopeAlways, WhyNot: "no", Patterns: []string{"cat *"}}, "offers[0].patterns", "must be empty"},
		{"an offer may carry a note", GrantOffer{Scope: ScopeSession, Offered: true, Tool: "bash", Note: "granted only if all 2 approvers choose Session"}, "", ""},
		{"a refusal carries no note", GrantOffer{Scope: ScopeAlways, WhyNot: "no", Note: "x"}, "offers[0].note", "must be empty"},
		{"a note is text", GrantOffer{Scope: ScopeSession, Offered: true, Tool: "bash", Note: "a\x1b[2Jb"}, "offers[0].note", "control"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := validApprovalNeeded()
			q.Offers = []GrantOffer{tt.offer}
			checkFieldError(t, q.Validate(), tt.wantField, tt.wantProblem)
		})
	}
	t.Run("at most two offers", func(t *testing.T) {
		q := validApprovalNeeded()
		q.Offers = append(q.Offers, q.Offers...)
		checkFieldError(t, q.Validate(), "offers", "at most 2")
	})
	t.Run("Offer finds always and always_prefix alike", func(t *testing.T) {
		q := validApprovalNeeded()
		if o := q.Offer(ScopeAlways); o == nil || o.Scope != ScopeAlwaysPrefix {
			t.Errorf("Offer(always) = %+v, want the always_prefix offer", o)
		}
		if o := q.Offer(ScopeSession); o == nil || o.Scope != ScopeSession {
			t.Errorf("Offer(session) = %+v, want the session offer", o)
		}
		q.Offers = nil
		if o := q.Offer(ScopeSession); o != nil {
			t.Errorf("Offer(session) without offers = %+v, want nil", o)
		}
	})
}

func TestGrantValidate(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(g *Grant)
		wantField   string
		wantProblem string
	}{
		{"the fixture is valid", func(*Grant) {}, "", ""},
		{"a session grant is valid", func(g *Grant) { g.Scope, g.SessionID, g.AgentID = ScopeSession, "sess-7f3a", "" }, "", ""},
		{"a session grant names its session", func(g *Grant) { g.Scope, g.AgentID = ScopeSession, "" }, "session_id", "must not be empty"},
		{"an always grant names its agent", func(g *Grant) { g.AgentID = "" }, "agent_id", "must not be empty"},
		{"once is not a grant", func(g *Grant) { g.Scope = ScopeOnce }, "scope", "session, always or always_prefix"},
		{"the id is a token", func(g *Grant) { g.ID = "a b" }, "id", "single subject token"},
		{"the tool is required", func(g *Grant) { g.Tool = "" }, "tool", "must not be empty"},
		{"teams are tokens", func(g *Grant) { g.Teams = []string{"a.b"} }, "teams[0]", "single subject token"},
		{"approvers have ids", func(g *Grant) { g.Approvers = []Approver{{Channel: "web"}} }, "approvers[0].id", "must not be empty"},
		{"the creation time is set", func(g *Grant) { g.CreatedAt = time.Time{} }, "created_at", "must be set"},
		{"a legacy grant may lack its creation time", func(g *Grant) { g.CreatedAt, g.Legacy = time.Time{}, true }, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := validGrant()
			tt.edit(g)
			checkFieldError(t, g.Validate(), tt.wantField, tt.wantProblem)
			reply := AdminReply{V: Version, OK: true, Grants: []Grant{*g}}
			if err := reply.Validate(); (err == nil) != (tt.wantField == "") {
				t.Errorf("AdminReply.Validate = %v, want the grant's verdict", err)
			}
		})
	}
}

func TestGrantEventValidate(t *testing.T) {
	if err := validGrantEvent().Validate(); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	e := validGrantEvent()
	e.Event = "granted"
	checkFieldError(t, e.Validate(), "event", "created, revoked or expired")
	e = validGrantEvent()
	e.Type = TypeApprovalNeeded
	checkFieldError(t, e.Validate(), "type", TypeGrantEvent)
	e = validGrantEvent()
	e.Grant.ID = ""
	checkFieldError(t, e.Validate(), "grant.id", "must not be empty")
}
