package messages

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateToken(t *testing.T) {
	tests := []struct {
		name        string
		value       string
		wantProblem string // "" means valid
	}{
		{"a plain id is a token", "sess-7f3a", ""},
		{"a ULID is a token", "01JQ8Z6Q3W5R0V8K2M4N6P8R0T", ""},
		{"an at sign is fine", "alice@corp", ""},
		{"an email address has a dot", "alice@example.com", "single subject token"},
		{"a colon and slash are fine", "k8s:ns/pod-1", ""},
		{"a non-ASCII letter is fine", "équipe", ""},
		{"128 bytes is the limit", strings.Repeat("a", 128), ""},
		{"an empty token is rejected", "", "must not be empty"},
		{"a dot splits a subject", "a.b", "single subject token"},
		{"a lone dot is rejected", ".", "single subject token"},
		{"a star is a wildcard", "*", "single subject token"},
		{"a star inside is rejected too", "a*b", "single subject token"},
		{"a greater-than is a wildcard", ">", "single subject token"},
		{"a space is rejected", "a b", "single subject token"},
		{"a tab is rejected", "\t", "single subject token"},
		{"a newline is rejected", "a\nb", "single subject token"},
		{"a carriage return is rejected", "a\r", "single subject token"},
		{"a no-break space is rejected", "a\u00a0b", "single subject token"},
		{"an ideographic space is rejected", "a\u3000b", "single subject token"},
		{"a line separator is rejected", "a\u2028b", "single subject token"},
		{"a NUL byte is rejected", "a\x00b", "control characters (found U+0000 at byte 1)"},
		{"DEL is rejected", "a\x7f", "control characters"},
		{"a C1 control is rejected", "a\u0085b", "single subject token"},
		{"a zero-width space is rejected", "a\u200bb", "invisible characters (found U+200B"},
		{"a right-to-left override is rejected", "a\u202eb", "invisible characters"},
		{"a byte-order mark is rejected", "\ufeffa", "invisible characters"},
		{"invalid UTF-8 is rejected", "a\xffb", "valid UTF-8"},
		{"129 bytes is too long", strings.Repeat("a", 129), "at most 128 bytes, got 129"},
		{"129 bytes of multi-byte letters is too long", strings.Repeat("é", 64) + "a", "at most 128 bytes, got 129"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateToken("session_id", tt.value)
			if tt.wantProblem == "" {
				if err != nil {
					t.Fatalf("ValidateToken(%q) = %v, want nil", tt.value, err)
				}
				return
			}
			var te *TokenError
			if !errors.As(err, &te) {
				t.Fatalf("ValidateToken(%q) = %v, want a *TokenError", tt.value, err)
			}
			if !errors.Is(err, ErrInvalidToken) || !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalidToken and ErrInvalid: %v", err)
			}
			if !strings.Contains(te.Problem, tt.wantProblem) {
				t.Errorf("problem = %q, want it to contain %q", te.Problem, tt.wantProblem)
			}
			if !strings.HasPrefix(err.Error(), "session_id ") {
				t.Errorf("error %q does not name what was wrong", err)
			}
		})
	}
}

func TestTokenErrorText(t *testing.T) {
	err := ValidateToken("session_id", "a.b")
	want := `session_id "a.b": must be a single subject token (no '.', '*', '>' or whitespace)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	long := ValidateToken("request_id", strings.Repeat("x", 5000)).Error()
	if len(long) > 200 || !strings.Contains(long, "(5000 bytes)") {
		t.Errorf("error for a 5000-byte value is not shortened: %d bytes: %.120s…", len(long), long)
	}
}

func TestNewSubjects(t *testing.T) {
	tests := []struct {
		name       string
		prefix     string
		wantPrefix string
		wantErr    string
	}{
		{"an empty prefix means the default", "", DefaultPrefix, ""},
		{"the default prefix is valid", "signoff.v1", "signoff.v1", ""},
		{"a single token is valid", "approvals", "approvals", ""},
		{"a deep prefix is valid", "acme.prod.signoff.v1", "acme.prod.signoff.v1", ""},
		{"a leading dot is rejected", ".signoff", "", `token 1 "": must not be empty`},
		{"a trailing dot is rejected", "signoff.", "", `token 2 "": must not be empty`},
		{"a double dot is rejected", "signoff..v1", "", `token 2 "": must not be empty`},
		{"a star is rejected", "signoff.*", "", `token 2 "*"`},
		{"a full wildcard is rejected", "signoff.>", "", `token 2 ">"`},
		{"whitespace is rejected", "sign off", "", "whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSubjects(tt.prefix)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewSubjects(%q) = %v, want an error containing %q", tt.prefix, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewSubjects(%q) = %v", tt.prefix, err)
			}
			if s.Prefix != tt.wantPrefix {
				t.Errorf("Prefix = %q, want %q", s.Prefix, tt.wantPrefix)
			}
		})
	}
}

func TestSubjectBuildersFollowTheDesign(t *testing.T) {
	custom := Subjects{Prefix: "acme.approvals"}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"requests", Subjects{}.Req("s1"), "signoff.v1.req.s1"},
		{"decisions", Subjects{}.Decision("s1", "r1"), "signoff.v1.decision.s1.r1"},
		{"status", Subjects{}.Status("s1"), "signoff.v1.status.s1"},
		{"cancel", Subjects{}.Cancel("s1"), "signoff.v1.cancel.s1"},
		{"turn", Subjects{}.Turn("s1"), "signoff.v1.turn.s1"},
		{"ask", Subjects{}.Ask("oncall"), "signoff.v1.ask.oncall"},
		{"resolved", Subjects{}.Resolved("oncall"), "signoff.v1.resolved.oncall"},
		{"respond", Subjects{}.Respond(), "signoff.v1.respond"},
		{"pending", Subjects{}.Pending("oncall"), "signoff.v1.pending.oncall"},
		{"admin", Subjects{}.Admin(AdminOpSetMode), "signoff.v1.admin.set_mode"},
		{"audit", Subjects{}.Audit("s1"), "signoff.v1.audit.s1"},
		{"all requests", Subjects{}.ReqAll(), "signoff.v1.req.*"},
		{"all status", Subjects{}.StatusAll(), "signoff.v1.status.*"},
		{"all cancels", Subjects{}.CancelAll(), "signoff.v1.cancel.*"},
		{"all turns", Subjects{}.TurnAll(), "signoff.v1.turn.*"},
		{"all pending", Subjects{}.PendingAll(), "signoff.v1.pending.*"},
		{"all admin ops", Subjects{}.AdminAll(), "signoff.v1.admin.>"},
		{"all audit", Subjects{}.AuditAll(), "signoff.v1.audit.>"},
		{"all asks", Subjects{}.AskAll(), "signoff.v1.ask.*"},
		{"all resolutions", Subjects{}.ResolvedAll(), "signoff.v1.resolved.*"},
		{"all decisions of a session", Subjects{}.DecisionAll("s1"), "signoff.v1.decision.s1.*"},
		{"a custom prefix", custom.Req("s1"), "acme.approvals.req.s1"},
		{"a custom prefix on a wildcard", custom.AdminAll(), "acme.approvals.admin.>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestParseTakesApartWhatTheBuildersMake(t *testing.T) {
	for _, s := range []Subjects{{}, {Prefix: "acme.prod.signoff"}} {
		tests := []struct {
			name    string
			subject string
			want    ParsedSubject
		}{
			{"request", s.Req("s1"), ParsedSubject{Kind: SubjectReq, Session: "s1"}},
			{"decision", s.Decision("s1", "r1"), ParsedSubject{Kind: SubjectDecision, Session: "s1", RequestID: "r1"}},
			{"status", s.Status("s1"), ParsedSubject{Kind: SubjectStatus, Session: "s1"}},
			{"cancel", s.Cancel("s1"), ParsedSubject{Kind: SubjectCancel, Session: "s1"}},
			{"turn", s.Turn("s1"), ParsedSubject{Kind: SubjectTurn, Session: "s1"}},
			{"ask", s.Ask("oncall"), ParsedSubject{Kind: SubjectAsk, Team: "oncall"}},
			{"resolved", s.Resolved("oncall"), ParsedSubject{Kind: SubjectResolved, Team: "oncall"}},
			{"respond", s.Respond(), ParsedSubject{Kind: SubjectRespond}},
			{"pending", s.Pending("oncall"), ParsedSubject{Kind: SubjectPending, Team: "oncall"}},
			{"admin", s.Admin(AdminOpRevokeGrants), ParsedSubject{Kind: SubjectAdmin, Op: AdminOpRevokeGrants}},
			{"audit", s.Audit("s1"), ParsedSubject{Kind: SubjectAudit, Session: "s1"}},
		}
		for _, tt := range tests {
			t.Run(s.prefix()+" "+tt.name, func(t *testing.T) {
				got, err := s.Parse(tt.subject)
				if err != nil {
					t.Fatalf("Parse(%q): %v", tt.subject, err)
				}
				if got != tt.want {
					t.Errorf("Parse(%q) = %+v, want %+v", tt.subject, got, tt.want)
				}
			})
		}
	}
}

func TestParseRejectsSubjectsThatDoNotBelong(t *testing.T) {
	s := Subjects{}
	tests := []struct {
		name     string
		subject  string
		wantText string
	}{
		{"another prefix", "other.v1.req.s1", `not under prefix "signoff.v1"`},
		{"a prefix that only starts the same", "signoff.v10.req.s1", "not under prefix"},
		{"the bare prefix", "signoff.v1", "not under prefix"},
		{"the prefix and a dot", "signoff.v1.", `unknown kind ""`},
		{"an unknown kind", "signoff.v1.approve.s1", `unknown kind "approve"`},
		{"a request subject without a session", "signoff.v1.req", "has 1 token(s)"},
		{"a request subject with an empty session", "signoff.v1.req.", "must not be empty"},
		{"a request subject with two tokens", "signoff.v1.req.a.b", "has 1 token(s) after \"req\", got 2"},
		{"a request subject with a wildcard session", "signoff.v1.req.*", `session_id "*"`},
		{"a request subject with a full wildcard", "signoff.v1.req.>", `session_id ">"`},
		{"a request subject with a space", "signoff.v1.req.a b", "single subject token"},
		{"a decision subject without a request id", "signoff.v1.decision.s1", "has 2 token(s)"},
		{"a decision subject with an empty request id", "signoff.v1.decision.s1.", `request_id "": must not be empty`},
		{"a respond subject with a token", "signoff.v1.respond.x", "has 0 token(s)"},
		{"an admin subject with two tokens", "signoff.v1.admin.set_mode.now", "has 1 token(s)"},
		{"a team with a tab", "signoff.v1.ask.on\tcall", `team "on\tcall"`},
		{"a 129-byte session", "signoff.v1.req." + strings.Repeat("s", 129), "at most 128 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Parse(tt.subject)
			if !errors.Is(err, ErrInvalidSubject) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, want an error wrapping ErrInvalidSubject", tt.subject, err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Parse(%q) = %q, want it to contain %q", tt.subject, err, tt.wantText)
			}
		})
	}
}

func TestSubjectTokenParsers(t *testing.T) {
	s := Subjects{}
	t.Run("the session of a request subject", func(t *testing.T) {
		got, err := s.SessionFromSubject(SubjectReq, "signoff.v1.req.sess-1")
		if err != nil || got != "sess-1" {
			t.Errorf("SessionFromSubject = %q, %v; want sess-1", got, err)
		}
	})
	t.Run("the session of a decision subject", func(t *testing.T) {
		got, err := s.SessionFromSubject(SubjectDecision, "signoff.v1.decision.sess-1.r-1")
		if err != nil || got != "sess-1" {
			t.Errorf("SessionFromSubject = %q, %v; want sess-1", got, err)
		}
	})
	t.Run("a status subject is not a request subject", func(t *testing.T) {
		_, err := s.SessionFromSubject(SubjectReq, "signoff.v1.status.sess-1")
		if !errors.Is(err, ErrInvalidSubject) || !strings.Contains(err.Error(), "is a status subject, want req") {
			t.Errorf("SessionFromSubject = %v, want a kind mismatch", err)
		}
	})
	t.Run("team subjects carry no session", func(t *testing.T) {
		_, err := s.SessionFromSubject(SubjectAsk, "signoff.v1.ask.oncall")
		if !errors.Is(err, ErrInvalidSubject) || !strings.Contains(err.Error(), "carry no session") {
			t.Errorf("SessionFromSubject = %v, want carry no session", err)
		}
	})
	t.Run("the team of a pending subject", func(t *testing.T) {
		got, err := s.TeamFromSubject(SubjectPending, "signoff.v1.pending.oncall")
		if err != nil || got != "oncall" {
			t.Errorf("TeamFromSubject = %q, %v; want oncall", got, err)
		}
	})
	t.Run("session subjects carry no team", func(t *testing.T) {
		_, err := s.TeamFromSubject(SubjectTurn, "signoff.v1.turn.s1")
		if !errors.Is(err, ErrInvalidSubject) || !strings.Contains(err.Error(), "carry no team") {
			t.Errorf("TeamFromSubject = %v, want carry no team", err)
		}
	})
	t.Run("a team subject of another kind is refused", func(t *testing.T) {
		if _, err := s.TeamFromSubject(SubjectAsk, "signoff.v1.resolved.oncall"); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("TeamFromSubject = %v, want ErrInvalidSubject", err)
		}
	})
	t.Run("the ids of a decision subject", func(t *testing.T) {
		session, id, err := s.DecisionFromSubject("signoff.v1.decision.sess-1.r-1")
		if err != nil || session != "sess-1" || id != "r-1" {
			t.Errorf("DecisionFromSubject = %q, %q, %v; want sess-1, r-1", session, id, err)
		}
	})
	t.Run("a request subject is not a decision subject", func(t *testing.T) {
		if _, _, err := s.DecisionFromSubject("signoff.v1.req.sess-1"); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("DecisionFromSubject = %v, want ErrInvalidSubject", err)
		}
	})
	t.Run("the op of an admin subject", func(t *testing.T) {
		got, err := s.AdminOpFromSubject("signoff.v1.admin.reload_policy")
		if err != nil || got != AdminOpReloadPolicy {
			t.Errorf("AdminOpFromSubject = %q, %v; want reload_policy", got, err)
		}
	})
	t.Run("a request on its own session's subject passes", func(t *testing.T) {
		if err := s.CheckSession(SubjectReq, "signoff.v1.req.sess-1", "sess-1"); err != nil {
			t.Errorf("CheckSession = %v, want nil", err)
		}
	})
	t.Run("a request on another session's subject is refused", func(t *testing.T) {
		err := s.CheckSession(SubjectReq, "signoff.v1.req.sess-1", "sess-2")
		checkFieldError(t, err, "session_id", `must match the subject's session "sess-1", got "sess-2"`)
	})
	t.Run("a malformed subject is refused before the comparison", func(t *testing.T) {
		if err := s.CheckSession(SubjectReq, "signoff.v1.req.a.b", "a"); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("CheckSession = %v, want ErrInvalidSubject", err)
		}
	})
	t.Run("a subject of another deployment is refused", func(t *testing.T) {
		other := Subjects{Prefix: "acme"}
		if _, err := other.SessionFromSubject(SubjectReq, "signoff.v1.req.s1"); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("SessionFromSubject = %v, want ErrInvalidSubject", err)
		}
	})
}
