package pager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Pager is the port the escalation code pages through. Implementations are
// safe for concurrent use; they hold no goroutines and need no Close.
type Pager interface {
	// Name is the pager's name in the config ("oncall-pd").
	Name() string
	// Kind is the vendor.
	Kind() Kind
	// Trigger opens the incident of p.RequestID, or adds to the open one:
	// the incident is keyed by [DedupKey], so a retried or duplicated
	// trigger (two broker replicas) is one incident. It returns once the
	// vendor accepted the event (HTTP 202; both vendors process events
	// asynchronously). Errors are [ErrInvalidPage] (nothing sent) or an
	// [*APIError].
	Trigger(ctx context.Context, p Page) (Ref, error)
	// Resolve closes the incident with this dedup key (see [DedupKey]). An
	// incident that is unknown or already closed is a success, so every
	// replica that saw the request settle may call it.
	Resolve(ctx context.Context, dedupKey string) error
	// CheckHealth reports whether the vendor answers with the configured
	// credentials, without paging anyone (see docs/PAGING.md for what each
	// vendor allows to be checked).
	CheckHealth(ctx context.Context) error
}

// Kind names a vendor (the policy's [policy.PagerKind]).
type Kind = policy.PagerKind

// The vendors.
const (
	KindPagerDuty = policy.PagerDuty
	KindOpsgenie  = policy.PagerOpsgenie
)

// Severity is PagerDuty's severity scale ([policy.PagerSeverity]); Opsgenie
// priorities map from it (critical P1, error P2, warning P3, info P4).
type Severity = policy.PagerSeverity

// The severities, most urgent first. PagerDuty services that derive urgency
// from severity treat critical and error as high urgency.
const (
	SeverityCritical = policy.SeverityCritical
	SeverityError    = policy.SeverityError
	SeverityWarning  = policy.SeverityWarning
	SeverityInfo     = policy.SeverityInfo
)

// Page is what the escalation code asks to page about. Text fields may come
// from an agent (a tool call's summary): they are cleaned of control and
// bidirectional-override characters and cut to each vendor's limits.
type Page struct {
	// RequestID is the approval request; the incident key derives from it.
	// Required; it must be a valid request id ([messages.ValidateToken]).
	RequestID string
	// Summary is the one-line title ("Approval needed: Bash rm -rf build
	// (team ops)"). Required.
	Summary string
	// Description is the longer text (the call, who asked, since when).
	Description string
	// Link is the question on the web page; an absolute http(s) URL, or
	// empty when there is no web page.
	Link string
	// Team, Tool and SessionID are shown as details and used as the
	// PagerDuty group and component.
	Team, Tool, SessionID string
	// Severity overrides the pager's configured severity.
	Severity Severity
	// Details are extra key/value pairs shown on the incident.
	Details map[string]string
	// Time is when the request was asked (zero: now).
	Time time.Time
}

// validate checks p and returns it cleaned.
func (p Page) validate() (Page, error) {
	if err := messages.ValidateToken("request_id", p.RequestID); err != nil {
		return p, fmt.Errorf("%w: %w", ErrInvalidPage, err)
	}
	p.Summary = strings.TrimSpace(clean(p.Summary, false))
	if p.Summary == "" {
		return p, fmt.Errorf("%w: summary is empty", ErrInvalidPage)
	}
	p.Description = clean(p.Description, true)
	p.Team, p.Tool, p.SessionID = clean(p.Team, false), clean(p.Tool, false), clean(p.SessionID, false)
	if p.Severity != "" && !p.Severity.Valid() {
		return p, fmt.Errorf("%w: severity %q is not one of critical, error, warning, info", ErrInvalidPage, p.Severity)
	}
	if p.Link != "" {
		u, err := url.Parse(p.Link)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return p, fmt.Errorf("%w: link %q is not an absolute http(s) URL without credentials", ErrInvalidPage, p.Link)
		}
	}
	if len(p.Details) > 0 {
		d := make(map[string]string, len(p.Details))
		for k, v := range p.Details {
			d[clean(k, false)] = clean(v, true)
		}
		p.Details = d
	}
	return p, nil
}

// DedupKey is the incident key of a request of a session: prefix, '-',
// the session id, ':' and the request id, when both are made of letters,
// digits, '-', '_' (and ':' in the request id) and the key fits both
// vendors; else prefix, ".sha256.", and the SHA-256 of the session id's
// length in decimal, ':', the session id and the request id, in hex (ids may hold '/', '%' or non-ASCII,
// which Opsgenie's alias travels badly with in a URL path). A request id
// is unique only within its session (DESIGN §5): another session — another
// agent, another tenant — may use the same one, so the key names both
// (red team AT F1: keyed by the request id alone, a second session's
// request of the same id, cancelled, resolved the first one's page). The
// session id holds no ':' in the first form, so the first ':' ends it; the
// '.' cannot occur in the first form: no pair of ids, however chosen, maps
// to the key of another pair. It is a pure function: every replica, every
// retry and the later resolve compute the same key.
func DedupKey(prefix, sessionID, requestID string) string {
	if prefix == "" {
		prefix = DefaultDedupPrefix
	}
	plain := sessionID != "" && requestID != "" && plainID(sessionID, false) && plainID(requestID, true) &&
		len(prefix)+len(sessionID)+len(requestID)+2 <= pdMaxDedupKey
	if plain {
		return prefix + "-" + sessionID + ":" + requestID
	}
	// The session's length first: no NUL or other byte in either id moves
	// the split between them.
	sum := sha256.Sum256([]byte(strconv.Itoa(len(sessionID)) + ":" + sessionID + requestID))
	return prefix + ".sha256." + hex.EncodeToString(sum[:])
}

// plainID reports whether id is made of letters, digits, '-', '_', and,
// with colon, ':'.
func plainID(id string, colon bool) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c == '-' || c == '_' || colon && c == ':' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return false
		}
	}
	return true
}

// pageTime is when the request was asked, or now.
func pageTime(p Page) time.Time {
	if p.Time.IsZero() {
		return time.Now().UTC()
	}
	return p.Time.UTC()
}

// details are the key/value pairs both vendors show on the incident.
func details(p Page) map[string]string {
	d := make(map[string]string, len(p.Details)+5)
	for k, v := range p.Details {
		d[k] = v
	}
	d["request_id"] = p.RequestID
	for k, v := range map[string]string{"team": p.Team, "tool": p.Tool, "session_id": p.SessionID, "link": p.Link} {
		if v != "" {
			d[k] = v
		}
	}
	return d
}

// Ref identifies what the vendor accepted.
type Ref struct {
	// Pager is the pager's name.
	Pager string
	// DedupKey is the incident key (what Resolve takes).
	DedupKey string
	// VendorID is the vendor's id of the accepted request when it gives one
	// (Opsgenie's requestId, which its Get Request Status endpoint looks
	// up); empty for PagerDuty.
	VendorID string
}

// clean drops control characters (keeping newlines and tabs when
// multiline), shows escaped (<U+202E>) the characters escapeRune names —
// bidi controls, invisible and other format characters, odd spaces,
// overlaid marks — which could make a page read as something it is not,
// and replaces invalid UTF-8.
func clean(s string, multiline bool) string {
	ok := true
	for _, r := range s {
		if dropRune(r, multiline) || escapeRune(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		case escapeRune(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		case dropRune(r, multiline):
			if r == '\n' || r == '\r' || r == '\t' {
				b.WriteByte(' ')
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapeRune reports whether r is shown escaped (<U+200B>) rather than as
// itself: characters a person cannot see or that change how others look —
// bidi controls and every other format character (zero-width characters,
// tag characters), spaces other than U+0020 (a shell reads a no-break
// space as part of a word), enclosing marks and the combining marks that
// draw over other characters (U+0334–U+0338: --force struck through) —
// as the approver's card shows them (red team AG F7: they reached the
// pager as they were).
func escapeRune(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Me, r), unicode.Is(unicode.Zs, r):
		return true
	case r >= 0x0334 && r <= 0x0338, r >= 0x20D2 && r <= 0x20D3, r >= 0x20D8 && r <= 0x20DA, r >= 0x20E5 && r <= 0x20E6, r >= 0x20EA && r <= 0x20EB:
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func dropRune(r rune, multiline bool) bool {
	if r == '\n' || r == '\t' {
		return !multiline
	}
	if unicode.IsControl(r) {
		return true
	}
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

// truncate cuts s to at most n characters (runes: both vendors count
// characters), ending with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}
