package messages

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// AuditBatchType is the "type" of an [AuditBatch].
const AuditBatchType = "audit_batch"

// AuditBatch is several decisions' [AuditRecord]s of one session appended
// to the SIGNOFF_AUDIT stream as one message, on that session's audit
// subject. A broker under load gathers the records it appends within a
// few milliseconds by session: one stream message instead of one per
// decision (docs/PROTOCOL.md "AuditRecord"). Read it with [AuditRecords].
type AuditBatch struct {
	V         int           `json:"v"`
	Type      string        `json:"type"` // "audit_batch"
	SessionID string        `json:"session_id"`
	Records   []AuditRecord `json:"records"`
}

// AuditRecordID is the identity of a decision's audit record:
// "<session>/<request>/<outcome>/<reason_code>/<call>", where call is 16
// hex digits of the SHA-256 of the session and request ids, the request's
// tool, arguments and working directory, each with its length before it
// (session and request ids may hold a '/': x and y/z are not x/y and z).
// It is the same for every append of one decision (a retry,
// another replica's re-evaluation of the same call with the same outcome),
// the Nats-Msg-Id of a record appended alone, and what readers key records
// by to count each decision once. The session is part of it (request ids
// are unique only within a session), and so is the call: an agent that
// sends another call under a request id it used before gets a record of
// its own, not one the stream or a reader drops as a copy.
func AuditRecordID(rec *AuditRecord) string {
	d := &rec.Decision
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, part := range [][]byte{[]byte(d.SessionID), []byte(d.RequestID), []byte(rec.Request.Tool), rec.Request.Arguments, []byte(rec.Request.Cwd)} {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(part)))])
		h.Write(part)
	}
	var sum [sha256.Size]byte
	return d.SessionID + "/" + d.RequestID + "/" + string(d.Outcome) + "/" + string(d.ReasonCode) + "/" +
		hex.EncodeToString(h.Sum(sum[:0])[:8])
}

// AuditRecordsHeader is the header of an [AuditBatch] message that says
// how many records it holds, so a reader (or the broker's retry
// accounting) can tell the shape without decoding the body.
const AuditRecordsHeader = "Signoff-Audit-Records"

// AuditRecords returns the decision records one message of the audit
// stream holds: one for an [AuditRecord], each of an [AuditBatch]'s, none
// for the stream's other messages (grant, breaker, person and canary
// events, told apart by their "type"). An error says the data is not JSON
// of either shape. The records of a batch are in the order they were
// decided by the replica that appended them.
func AuditRecords(data []byte) ([]AuditRecord, error) {
	var m struct {
		Type    string        `json:"type"`
		Records []AuditRecord `json:"records"`
		AuditRecord
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("audit message: %w", err)
	}
	switch {
	case m.Type == AuditBatchType:
		for i := range m.Records {
			if m.Records[i].Decision.RequestID == "" {
				return nil, fmt.Errorf("audit batch: record %d has no decision", i)
			}
		}
		return m.Records, nil
	case m.Type != "" || m.Decision.RequestID == "":
		return nil, nil
	}
	return []AuditRecord{m.AuditRecord}, nil
}

// AppendJSON appends b's JSON encoding to buf.
func (b *AuditBatch) AppendJSON(buf []byte) ([]byte, error) {
	buf = b.appendHead(buf)
	var err error
	for i := range b.Records {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, err = b.Records[i].AppendJSON(buf); err != nil {
			return buf, fmt.Errorf("record %d (%s): %w", i, b.Records[i].Decision.RequestID, err)
		}
	}
	return append(buf, "]}"...), nil
}

// AppendAuditBatch appends to buf the JSON of an [AuditBatch] of session
// whose records are already encoded: each element of records is one
// [AuditRecord]'s JSON, as its AppendJSON writes it. A broker encodes each
// record once, to learn its size, and then joins them.
func AppendAuditBatch(buf []byte, session string, records [][]byte) []byte {
	buf = (&AuditBatch{V: Version, Type: AuditBatchType, SessionID: session}).appendHead(buf)
	for i, r := range records {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, r...)
	}
	return append(buf, "]}"...)
}

// appendHead appends b's JSON up to its first record.
func (b *AuditBatch) appendHead(buf []byte) []byte {
	buf = append(buf, `{"v":`...)
	buf = strconv.AppendInt(buf, int64(b.V), 10)
	buf = appendKeyString(buf, `,"type":`, b.Type)
	buf = appendKeyString(buf, `,"session_id":`, b.SessionID)
	return append(buf, `,"records":[`...)
}

// RecentRecords remembers the last ids (see [AuditRecordID]) it was asked
// about, up to a bound, so a reader of the audit stream shows a decision
// once although the stream holds two copies: an agent's retry of a request
// decided again, with the same outcome, by another replica whose record
// went into an [AuditBatch] (a record appended alone is dropped by the
// stream's de-duplication instead). Not safe for concurrent use.
type RecentRecords struct {
	set  map[string]struct{}
	ring []string // the ids remembered, oldest at next once full
	next int
	max  int
}

// NewRecentRecords remembers the last n ids (at least one).
func NewRecentRecords(n int) *RecentRecords {
	n = max(n, 1)
	return &RecentRecords{set: make(map[string]struct{}, min(n, 1024)), max: n}
}

// Seen reports whether id was among the ids asked about lately, and
// remembers it.
func (r *RecentRecords) Seen(id string) bool {
	if _, ok := r.set[id]; ok {
		return true
	}
	if len(r.ring) < r.max {
		r.ring = append(r.ring, id)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % r.max
	}
	r.set[id] = struct{}{}
	return false
}

// clipText bounds each text Clip keeps that may repeat the arguments.
const clipText = 1024

// Clip returns a copy of a small enough for a stream message whatever the
// call carried: its request's arguments are {} and its rest of the batch
// is left out, with the arguments' size and digest in Clipped, and their
// bytes too (base64: a '<' that JSON re-encodes as six bytes stays one)
// when those are at most maxArguments (the decision's updated arguments
// by size and digest); the risk keeps its tier, rule and reason but not
// its sub-commands' verdicts (which repeat the command's words); texts
// that may quote the command (the decision's reason and message, granted
// patterns, the risk's reason) are cut to 1 KiB. recordBytes is a's
// encoded size. A record that could not be stored whole is stored so,
// not retried forever while the call it records has run (red team AW F7),
// and what ran stays readable (AX F3: a padded call hid in its clipped
// record).
func (a *AuditRecord) Clip(recordBytes, maxArguments int) AuditRecord {
	c := *a
	sum := sha256.Sum256(a.Request.Arguments)
	c.Clipped = &ClippedRecord{RecordBytes: recordBytes, ArgumentsBytes: len(a.Request.Arguments),
		ArgumentsSHA256: hex.EncodeToString(sum[:])}
	if base64.StdEncoding.EncodedLen(len(a.Request.Arguments)) <= maxArguments {
		c.Clipped.Arguments = a.Request.Arguments
	}
	c.Request.Arguments = json.RawMessage(`{}`)
	c.Request.BatchRemaining = nil
	c.Request.Description = cutText(c.Request.Description)
	c.Decision.Reason, c.Decision.LLMMessage = cutText(c.Decision.Reason), cutText(c.Decision.LLMMessage)
	c.Decision.Answer, c.Decision.Feedback = nil, cutText(c.Decision.Feedback)
	if u := a.Decision.UpdatedArguments; len(u) > 0 {
		sum := sha256.Sum256(u)
		c.Clipped.UpdatedBytes, c.Clipped.UpdatedSHA256 = len(u), hex.EncodeToString(sum[:])
		c.Decision.UpdatedArguments = nil
	}
	if len(c.Decision.GrantedPattern) > 0 {
		c.Decision.GrantedPattern = make([]string, len(a.Decision.GrantedPattern))
		for i, p := range a.Decision.GrantedPattern {
			c.Decision.GrantedPattern[i] = cutText(p)
		}
	}
	if a.Risk != nil {
		r := *a.Risk
		r.Subcommands, r.Reason = nil, cutText(r.Reason)
		c.Risk = &r
	}
	return c
}

// cutText cuts s to clipText bytes (at a rune's start), marked with "…".
func cutText(s string) string {
	if len(s) <= clipText {
		return s
	}
	i := clipText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
