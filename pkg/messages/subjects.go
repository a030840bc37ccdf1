package messages

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultPrefix is the subject prefix used when none is configured.
const DefaultPrefix = "signoff.v1"

// QueueGroup is the NATS queue group every broker replica subscribes with,
// so that each request is handled by exactly one replica.
const QueueGroup = "signoff-brokers"

// AuditStream is the name of the JetStream stream that stores the audit
// subjects.
const AuditStream = "SIGNOFF_AUDIT"

// MaxTokenBytes is the longest value [ValidateToken] accepts.
const MaxTokenBytes = 128

// SubjectKind is the token after the prefix that says what a subject
// carries.
type SubjectKind string

// Subject kinds. See DESIGN §2 and docs/PROTOCOL.md for who publishes and who
// listens on each.
const (
	SubjectReq      SubjectKind = "req"      // req.<session>
	SubjectDecision SubjectKind = "decision" // decision.<session>.<request_id>
	SubjectStatus   SubjectKind = "status"   // status.<session>
	SubjectCancel   SubjectKind = "cancel"   // cancel.<session>
	SubjectTurn     SubjectKind = "turn"     // turn.<session>
	SubjectAsk      SubjectKind = "ask"      // ask.<team>
	SubjectResolved SubjectKind = "resolved" // resolved.<team>
	SubjectRespond  SubjectKind = "respond"  // respond
	SubjectPending  SubjectKind = "pending"  // pending.<team>
	SubjectAdmin    SubjectKind = "admin"    // admin.<op>
	SubjectAudit    SubjectKind = "audit"    // audit.<session>
)

// Admin operations, the last token of an admin subject.
const (
	// AdminOpSetMode sets (or, with an empty mode, clears) the policy mode
	// override of a session or an agent type.
	AdminOpSetMode = "set_mode"
	// AdminOpReloadPolicy reloads the policy file now.
	AdminOpReloadPolicy = "reload_policy"
	// AdminOpRevokeGrants revokes the grants of a session or an agent.
	AdminOpRevokeGrants = "revoke_grants"
	// AdminOpListGrants lists grants (of a session, an agent, teams; for
	// an approver, only those of the approver's teams).
	AdminOpListGrants = "list_grants"
	// AdminOpRevokeGrant revokes one grant by its id.
	AdminOpRevokeGrant = "revoke_grant"
	// AdminOpSetShadow sets the shadow policy (the YAML in policy) on
	// every replica: judged beside the live one, never enforced.
	AdminOpSetShadow = "set_shadow"
	// AdminOpClearShadow ends the shadow policy.
	AdminOpClearShadow = "clear_shadow"
)

// problemNotToken is shared by [ValidateToken] and the field checks so that
// a token error reads the same wherever it is found.
const problemNotToken = "must be a single subject token (no '.', '*', '>' or whitespace)"

// ValidateToken reports whether value can be used as one NATS subject token:
// session ids, request ids, team names and admin ops travel in subjects (and
// agent ids follow the same rules), so a '.' would split them, '*' and '>'
// would make a publish subject a wildcard, and whitespace would break the
// protocol line. Braces are refused too: ids become parts of Redis keys whose
// hash tags they delimit. It also rejects empty values, values over [MaxTokenBytes] bytes, invalid UTF-8 and
// control or invisible characters. The error is a [*TokenError] naming what.
func ValidateToken(what, value string) error {
	if p := tokenProblem(value); p != "" {
		return &TokenError{What: what, Value: value, Problem: p}
	}
	return nil
}

// tokenProblem returns why v is not a valid token, or "". It does not
// allocate when v is valid: it runs on every message the broker receives.
func tokenProblem(v string) string {
	if v == "" {
		return "must not be empty"
	}
	if len(v) > MaxTokenBytes {
		return "must be at most " + strconv.Itoa(MaxTokenBytes) + " bytes, got " + strconv.Itoa(len(v))
	}
	return charProblem(v, true)
}

// charProblem checks each character of an identifier: valid UTF-8, no
// whitespace, nothing unprintable, and for subject tokens no '.', '*' or '>'.
func charProblem(v string, token bool) string {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ', c >= '\t' && c <= '\r':
				if token {
					return problemNotToken
				}
				return "must not contain whitespace"
			case c < 0x20, c == 0x7f:
				return fmt.Sprintf("must not contain control characters (found %U at byte %d)", rune(c), i)
			case token && (c == '.' || c == '*' || c == '>'):
				return problemNotToken
			case token && (c == '{' || c == '}'):
				// Ids become parts of Redis keys whose hash tags are
				// delimited by braces (docs/STATE.md).
				return "must not contain '{' or '}'"
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return "must be valid UTF-8 (bad byte at " + strconv.Itoa(i) + ")"
		case unicode.IsSpace(r):
			if token {
				return problemNotToken
			}
			return "must not contain whitespace"
		case !unicode.IsPrint(r):
			// Format characters (zero-width space, bidi overrides) make two
			// different ids look the same on an approver's screen.
			return fmt.Sprintf("must not contain control or invisible characters (found %U at byte %d)", r, i)
		}
		i += size
	}
	return ""
}

// Subjects builds and parses the subjects of one deployment. The zero value
// uses [DefaultPrefix]; use [NewSubjects] to check a configured prefix.
//
// Builders do not validate their arguments: every caller holds values that
// passed a message's Validate (or [ValidateToken]) already, and checking
// again on each publish would cost the hot path for nothing. Parsers do
// validate, because a received subject is input.
type Subjects struct {
	Prefix string
}

// NewSubjects returns the subjects under prefix ("" means [DefaultPrefix]).
// The prefix must be one or more '.'-separated tokens, each valid under
// [ValidateToken].
func NewSubjects(prefix string) (Subjects, error) {
	if prefix == "" {
		return Subjects{Prefix: DefaultPrefix}, nil
	}
	rest := prefix
	for n := 1; ; n++ {
		tok, tail, more := strings.Cut(rest, ".")
		if p := tokenProblem(tok); p != "" {
			if p == problemNotToken {
				p = "tokens must be separated by single '.' and hold no '*', '>' or whitespace"
			}
			return Subjects{}, &TokenError{What: "subject prefix", Value: prefix,
				Problem: "token " + strconv.Itoa(n) + " " + strconv.Quote(tok) + ": " + p}
		}
		if !more {
			break
		}
		rest = tail
	}
	return Subjects{Prefix: prefix}, nil
}

func (s Subjects) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

// Req is the subject an agent sends a [Request] to (request/reply).
func (s Subjects) Req(session string) string { return s.prefix() + ".req." + session }

// Decision is the subject the broker publishes the final [Decision] of a
// pending request on. Subscribe to it before sending the request.
func (s Subjects) Decision(session, requestID string) string {
	return s.prefix() + ".decision." + session + "." + requestID
}

// Status is the subject an agent sends a [StatusRequest] to (request/reply).
func (s Subjects) Status(session string) string { return s.prefix() + ".status." + session }

// Cancel is the subject an agent sends a [CancelRequest] to (request/reply).
func (s Subjects) Cancel(session string) string { return s.prefix() + ".cancel." + session }

// Turn is the subject an agent sends a [TurnRequest] to (request/reply).
func (s Subjects) Turn(session string) string { return s.prefix() + ".turn." + session }

// Ask is the subject the broker publishes a team's [ApprovalNeeded] on.
func (s Subjects) Ask(team string) string { return s.prefix() + ".ask." + team }

// Resolved is the subject the broker publishes a team's [Resolved] on.
func (s Subjects) Resolved(team string) string { return s.prefix() + ".resolved." + team }

// Respond is the subject approvers send a [Response] to (request/reply).
func (s Subjects) Respond() string { return s.prefix() + ".respond" }

// Pending is the subject an approver sends a [PendingRequest] to
// (request/reply).
func (s Subjects) Pending(team string) string { return s.prefix() + ".pending." + team }

// Admin is the subject of an admin operation such as [AdminOpSetMode]
// (request/reply with an [AdminRequest]).
func (s Subjects) Admin(op string) string { return s.prefix() + ".admin." + op }

// Audit is the subject the broker appends a session's [AuditRecord]s to.
func (s Subjects) Audit(session string) string { return s.prefix() + ".audit." + session }

// People is the subject approver bots send [PersonEvent]s on (a broker
// appends them to the audit stream).
func (s Subjects) People() string { return s.prefix() + ".people" }

// AuditPeople is the audit subject of a channel's [PersonEvent]s: two
// tokens after "audit", so it is never a session's [Subjects.Audit].
func (s Subjects) AuditPeople(channel string) string { return s.prefix() + ".audit.people." + channel }

// ReqAll matches every session's request subject (brokers subscribe to it
// in [QueueGroup]).
func (s Subjects) ReqAll() string { return s.prefix() + ".req.*" }

// StatusAll matches every session's status subject.
func (s Subjects) StatusAll() string { return s.prefix() + ".status.*" }

// CancelAll matches every session's cancel subject.
func (s Subjects) CancelAll() string { return s.prefix() + ".cancel.*" }

// TurnAll matches every session's turn subject.
func (s Subjects) TurnAll() string { return s.prefix() + ".turn.*" }

// PendingAll matches every team's pending subject.
func (s Subjects) PendingAll() string { return s.prefix() + ".pending.*" }

// AdminAll matches every admin subject.
func (s Subjects) AdminAll() string { return s.prefix() + ".admin.>" }

// AuditAll matches every audit subject (the subjects of [AuditStream]).
func (s Subjects) AuditAll() string { return s.prefix() + ".audit.>" }

// AskAll matches the questions of every team (dashboards, tests).
func (s Subjects) AskAll() string { return s.prefix() + ".ask.*" }

// ResolvedAll matches the resolutions of every team.
func (s Subjects) ResolvedAll() string { return s.prefix() + ".resolved.*" }

// DecisionAll matches the decisions of every request of one session: an
// agent with many calls in flight may hold one subscription instead of one
// per request.
func (s Subjects) DecisionAll(session string) string {
	return s.prefix() + ".decision." + session + ".*"
}

// ParsedSubject is a received subject taken apart by [Subjects.Parse]. Only
// the fields of its kind are set.
type ParsedSubject struct {
	Kind      SubjectKind
	Session   string // req, decision, status, cancel, turn, audit
	RequestID string // decision
	Team      string // ask, resolved, pending
	Op        string // admin
}

// Parse takes a received subject apart. It fails with an error wrapping
// [ErrInvalidSubject] when the subject is not under the prefix, has an
// unknown kind, the wrong number of tokens for its kind, or a token that
// [ValidateToken] rejects.
func (s Subjects) Parse(subject string) (ParsedSubject, error) {
	p := s.prefix()
	if len(subject) <= len(p) || !strings.HasPrefix(subject, p) || subject[len(p)] != '.' {
		return ParsedSubject{}, subjectErr(subject, "not under prefix "+strconv.Quote(p))
	}
	rest := subject[len(p)+1:]
	kindTok, args, hasArgs := strings.Cut(rest, ".")
	kind := SubjectKind(kindTok)
	var names []string
	switch kind {
	case SubjectReq, SubjectStatus, SubjectCancel, SubjectTurn, SubjectAudit:
		names = []string{"session_id"}
	case SubjectDecision:
		names = []string{"session_id", "request_id"}
	case SubjectAsk, SubjectResolved, SubjectPending:
		names = []string{"team"}
	case SubjectAdmin:
		names = []string{"admin op"}
	case SubjectRespond:
		names = nil
	default:
		return ParsedSubject{}, subjectErr(subject, "unknown kind "+strconv.Quote(kindTok))
	}
	// Split without allocating: the broker parses the subject of every
	// message it receives.
	var toks [2]string
	n := 0
	for hasArgs {
		var tok string
		tok, args, hasArgs = strings.Cut(args, ".")
		if n < len(toks) {
			toks[n] = tok
		}
		n++
	}
	if n != len(names) {
		return ParsedSubject{}, subjectErr(subject, fmt.Sprintf("a %s subject has %d token(s) after %q, got %d",
			kind, len(names), kindTok, n))
	}
	for i, name := range names {
		if err := ValidateToken(name, toks[i]); err != nil {
			return ParsedSubject{}, fmt.Errorf("%w %s: %w", ErrInvalidSubject, quoteShort(subject), err)
		}
	}
	ps := ParsedSubject{Kind: kind}
	switch kind {
	case SubjectDecision:
		ps.Session, ps.RequestID = toks[0], toks[1]
	case SubjectAsk, SubjectResolved, SubjectPending:
		ps.Team = toks[0]
	case SubjectAdmin:
		ps.Op = toks[0]
	case SubjectRespond:
	default:
		ps.Session = toks[0]
	}
	return ps, nil
}

// SessionFromSubject returns the session token of a received subject of the
// given kind (req, decision, status, cancel, turn or audit). It fails with an
// error wrapping [ErrInvalidSubject] when the subject is of another kind or
// malformed.
func (s Subjects) SessionFromSubject(kind SubjectKind, subject string) (string, error) {
	return s.tokenFromSubject(kind, subject, "session", func(ps ParsedSubject) string { return ps.Session })
}

// tokenFromSubject returns the token that part reads of a received subject
// of the given kind; what names the token when that kind has none.
func (s Subjects) tokenFromSubject(kind SubjectKind, subject, what string, part func(ParsedSubject) string) (string, error) {
	ps, err := s.parseKind(kind, subject)
	if err != nil {
		return "", err
	}
	if v := part(ps); v != "" {
		return v, nil
	}
	return "", subjectErr(subject, string(kind)+" subjects carry no "+what)
}

// CheckSession checks that a message carrying sessionID arrived on a
// subject of the given kind for that same session. NATS permissions are
// written against subjects, so a request whose session_id differs from its
// subject's would act on a session its sender may not be allowed to touch.
// A mismatch is a [*FieldError] on session_id.
func (s Subjects) CheckSession(kind SubjectKind, subject, sessionID string) error {
	got, err := s.SessionFromSubject(kind, subject)
	if err != nil {
		return err
	}
	if got != sessionID {
		return &FieldError{Field: "session_id", Problem: "must match the subject's session " +
			strconv.Quote(got) + ", got " + quoteShort(sessionID)}
	}
	return nil
}

// TeamFromSubject returns the team token of a received subject of the given
// kind (ask, resolved or pending).
func (s Subjects) TeamFromSubject(kind SubjectKind, subject string) (string, error) {
	return s.tokenFromSubject(kind, subject, "team", func(ps ParsedSubject) string { return ps.Team })
}

// DecisionFromSubject returns the session and request id of a decision
// subject.
func (s Subjects) DecisionFromSubject(subject string) (session, requestID string, err error) {
	ps, err := s.parseKind(SubjectDecision, subject)
	if err != nil {
		return "", "", err
	}
	return ps.Session, ps.RequestID, nil
}

// AdminOpFromSubject returns the operation of an admin subject. It does not
// check that the operation is known: the broker answers an unknown one with
// its own error.
func (s Subjects) AdminOpFromSubject(subject string) (string, error) {
	ps, err := s.parseKind(SubjectAdmin, subject)
	if err != nil {
		return "", err
	}
	return ps.Op, nil
}

func (s Subjects) parseKind(kind SubjectKind, subject string) (ParsedSubject, error) {
	ps, err := s.Parse(subject)
	if err != nil {
		return ParsedSubject{}, err
	}
	if ps.Kind != kind {
		return ParsedSubject{}, subjectErr(subject, fmt.Sprintf("is a %s subject, want %s", ps.Kind, kind))
	}
	return ps, nil
}

func subjectErr(subject, problem string) error {
	return fmt.Errorf("%w %s: %s", ErrInvalidSubject, quoteShort(subject), problem)
}
