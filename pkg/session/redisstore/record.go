package redisstore

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// A record is stored as one string of length-prefixed fields
// ("<len>:<bytes>", no separators), in this order. A string, not a hash:
// Redis keeps a hash compact (listpack) only while every value is at most
// 64 bytes, and a payload never is; a hashtable-encoded hash costs about
// 60 bytes per field more than the string.
//
//	1 format version ("1")     6 approvals required     11 requested by
//	2 state                    7 approvals (fields)     12 tool
//	3 created (µs, Redis TIME) 8 decision (JSON)        13 teams (fields)
//	4 expires (µs)             9 TTL (ns)               14 payload codec
//	5 decided (µs or empty)   10 agent id               15 payload
//
// Scripts rewrite fields 2–8 and copy the rest (the tail) unchanged.
//
// Each entry of the approvals list is "<id> <scope>" (the scope the
// approver chose: once, session, always, always_prefix) or the bare id of
// a vote without a scope (a broker that predates scopes on votes; its
// scope reads as empty, which session.Record.ApprovalScope takes for
// once). Approver ids have no white space (session.Vote.Validate), so the
// first space ends the id.
const (
	fVersion = iota
	fState
	fCreated
	fExpires
	fDecided
	fNeed
	fApprovals
	fDecision
	fTTL
	fAgent
	fRequestedBy
	fTool
	fTeams
	fCodec
	fPayload
	numFields
)

const recordVersion = "1"

// Payload codecs. A codec, once released, never changes: records written
// by one version of the broker are read by others during a rolling
// upgrade, and live up to TTL + retention.
const (
	codecRaw = ""
	// codecZstd1 is zstd with the raw-content dictionary payloadDictV1.
	codecZstd1 = "z1"
)

// payloadDictV1 is a zstd raw-content dictionary: two approval_needed
// questions (messages.ApprovalNeeded) with typical values. Payloads are
// the broker's questions, whose field names are a third of their bytes;
// with the dictionary a 700-byte question compresses to about 250 bytes,
// without it to about 410. Frozen: a test checks its hash.
//
//go:embed payload_dict_v1.json
var payloadDictV1 []byte

// payloadDictID identifies payloadDictV1 inside zstd frames.
const payloadDictID = 0x5157_0001

// compressMin is the payload size from which payloads are stored
// compressed (when that makes them smaller). A variable only so that the
// memory report can show the difference.
var compressMin = 128

// maxPayload bounds a decompressed payload, so that a corrupt or hostile
// value in Redis cannot make a replica allocate without limit.
const maxPayload = 16 << 20

var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), // Redis keeps the bytes intact
			zstd.WithLowerEncoderMem(true),
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderDictRaw(payloadDictID, payloadDictV1))
		if err != nil {
			panic("redisstore: zstd encoder: " + err.Error())
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(maxPayload),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderDictRaw(payloadDictID, payloadDictV1))
		if err != nil {
			panic("redisstore: zstd decoder: " + err.Error())
		}
		return d
	})
)

// appendField appends one length-prefixed field.
func appendField(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

func appendFieldBytes(b, s []byte) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// encodeList encodes a list of strings as concatenated fields.
func encodeList(items []string) string {
	var b []byte
	for _, s := range items {
		b = appendField(b, s)
	}
	return string(b)
}

// splitFields splits s into its length-prefixed fields.
func splitFields(s string) ([]string, error) {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, ':')
		if i < 0 {
			return nil, errors.New("field without a length")
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || i+1+n > len(s) {
			return nil, fmt.Errorf("bad field length %q", s[:i])
		}
		out = append(out, s[i+1:i+1+n])
		s = s[i+1+n:]
	}
	return out, nil
}

// encodeTail encodes the fields of req that no script changes (9–15): the
// question as JSON (the payload), compressed when large. The payload is what
// the broker stored before questions were typed on the record (an encoded
// messages.ApprovalNeeded), so records of either version read alike.
func encodeTail(req *session.Request) ([]byte, error) {
	js, err := json.Marshal(&req.Question)
	if err != nil {
		return nil, fmt.Errorf("%w: question of %s/%s: %v", session.ErrInvalid, req.SessionID, req.ID, err)
	}
	codec, payload := codecRaw, js
	if len(payload) >= compressMin {
		if z := zstdEncoder().EncodeAll(payload, make([]byte, 0, len(payload)/2)); len(z) < len(payload) {
			codec, payload = codecZstd1, z
		}
	}
	b := make([]byte, 0, len(payload)+len(req.AgentID)+len(req.RequestedBy)+len(req.Tool)+64)
	b = appendField(b, strconv.FormatInt(int64(req.TTL), 10))
	b = appendField(b, req.AgentID)
	b = appendField(b, req.RequestedBy)
	b = appendField(b, req.Tool)
	b = appendField(b, encodeList(req.Teams))
	b = appendField(b, codec)
	return appendFieldBytes(b, payload), nil
}

// decodeRecord parses a stored record of request id in session sess.
func decodeRecord(sess, id, v string) (*session.Record, error) {
	return decodeRecordAsking(sess, id, v, nil)
}

// decodeRecordAsking is decodeRecord for a record whose question the caller
// knows to be q (it just stored it): the payload is not decoded again. With
// q nil the payload is decoded.
func decodeRecordAsking(sess, id, v string, q *messages.ApprovalNeeded) (*session.Record, error) {
	f, err := splitFields(v)
	if err != nil {
		return nil, fmt.Errorf("record %s/%s: %w", sess, id, err)
	}
	if len(f) != numFields || f[fVersion] != recordVersion {
		return nil, fmt.Errorf("record %s/%s: %d fields of version %q, want %d of version %s",
			sess, id, len(f), first(f), numFields, recordVersion)
	}
	bad := func(what string, err error) (*session.Record, error) {
		return nil, fmt.Errorf("record %s/%s: %s: %w", sess, id, what, err)
	}
	r := &session.Record{State: messages.State(f[fState])}
	r.ID, r.SessionID = id, sess
	r.AgentID, r.RequestedBy, r.Tool = f[fAgent], f[fRequestedBy], f[fTool]
	if r.CreatedAt, err = parseMicros(f[fCreated]); err != nil {
		return bad("created", err)
	}
	if r.ExpiresAt, err = parseMicros(f[fExpires]); err != nil {
		return bad("expires", err)
	}
	if f[fDecided] != "" {
		if r.DecidedAt, err = parseMicros(f[fDecided]); err != nil {
			return bad("decided", err)
		}
	}
	if r.ApprovalsRequired, err = strconv.Atoi(f[fNeed]); err != nil {
		return bad("approvals required", err)
	}
	ttl, err := strconv.ParseInt(f[fTTL], 10, 64)
	if err != nil {
		return bad("ttl", err)
	}
	r.TTL = time.Duration(ttl)
	if r.Teams, err = splitFields(f[fTeams]); err != nil {
		return bad("teams", err)
	}
	if f[fApprovals] != "" {
		if r.Approvals, r.ApprovalScopes, err = decodeApprovals(f[fApprovals]); err != nil {
			return bad("approvals", err)
		}
	}
	if f[fDecision] != "" {
		r.Decision = new(messages.Decision)
		if err := json.Unmarshal([]byte(f[fDecision]), r.Decision); err != nil {
			return bad("decision", err)
		}
	}
	if q != nil {
		r.Question = *q
	} else if r.Question, err = decodeQuestion(f[fCodec], f[fPayload]); err != nil {
		// The request's state is intact and can still be settled; only
		// what needs the question fails, closed (session.Record.QuestionErr).
		r.QuestionErr = fmt.Errorf("record %s/%s: stored question unreadable: %w", sess, id, err)
	}
	return r, nil
}

// decodeApprovals splits the approvals field into the approver ids and,
// parallel to them, the scope each chose (see the record layout above).
func decodeApprovals(s string) ([]string, []messages.Scope, error) {
	entries, err := splitFields(s)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(entries))
	scopes := make([]messages.Scope, len(entries))
	for i, e := range entries {
		id, scope, found := strings.Cut(e, " ")
		ids[i] = id
		if found {
			if sc := messages.Scope(scope); sc.Valid() {
				scopes[i] = sc
			} else {
				return nil, nil, fmt.Errorf("approval %d (%q): unknown scope %q", i+1, id, scope)
			}
		}
	}
	return ids, scopes, nil
}

// approvalEntry is the approvals-list entry of v (see the record layout).
func approvalEntry(v session.Vote) string {
	if v.Scope == "" {
		return v.ApproverID
	}
	return v.ApproverID + " " + string(v.Scope)
}

// decodeQuestion decodes a stored payload: the question as JSON, raw or
// compressed with codec.
func decodeQuestion(codec, payload string) (messages.ApprovalNeeded, error) {
	var q messages.ApprovalNeeded
	var js []byte
	switch codec {
	case codecRaw:
		js = []byte(payload)
	case codecZstd1:
		var err error
		if js, err = zstdDecoder().DecodeAll([]byte(payload), nil); err != nil {
			return q, fmt.Errorf("payload codec %s: %w", codec, err)
		}
	default:
		return q, fmt.Errorf("unknown payload codec %q", codec)
	}
	if len(js) == 0 {
		return q, errors.New("no question stored")
	}
	if err := json.Unmarshal(js, &q); err != nil {
		return messages.ApprovalNeeded{}, fmt.Errorf("question JSON: %w", err)
	}
	return q, nil
}

func first(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func parseMicros(s string) (time.Time, error) {
	us, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(us).UTC(), nil
}

// micros formats a duration as whole microseconds, rounding up so that a
// request never expires before its TTL has fully passed.
func micros(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Microsecond-1)/time.Microsecond), 10)
}
