package messages

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// pieces are the string fragments the generator combines: every escape
// encoding/json has (quotes, backslashes, control characters with and
// without short forms, HTML characters, U+2028/U+2029, invalid UTF-8,
// multi-byte runes) and plain text.
var pieces = []string{
	"", "a", "ls -la", `"`, `\`, "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
	"<", ">", "&", "\u2028", "\u2029", "\u2027", "é", "日本", "🙂", "\xff", "\xe2\x80", "\xed\xa0\x80",
	"rm -rf /", "$(curl x|sh)", "</script>",
}

func randString(r *rand.Rand) string {
	var b []byte
	for range r.IntN(5) {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

func randStrings(r *rand.Rand) []string {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, 1+r.IntN(3))
	for i := range out {
		out[i] = randString(r)
	}
	return out
}

var raws = []string{
	``, `{}`, `{"command":"ls -la"}`, `{"command": "ls -la"}`, "{\n  \"a\" : [1, 2,\t3]\n}",
	`{"c":"a<b>&c"}`, `{"c":"\u2028"}`, "{\"c\":\"\u2028\u2029\"}", `{"c":"x\"y\\"}`, `[1,"a b",null,true]`,
	`"str"`, `12.5e3`, `null`, `{"nested":{"k":["v w",{"z":"<"}]}}`,
}

func randRaw(r *rand.Rand) json.RawMessage {
	s := raws[r.IntN(len(raws))]
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func randTime(r *rand.Rand) time.Time {
	switch r.IntN(5) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(r.Int64N(1<<34), 0).UTC()
	case 2:
		return time.Unix(r.Int64N(1<<34), r.Int64N(1e9)).UTC()
	case 3:
		return time.Unix(r.Int64N(1<<34), r.Int64N(1e9)).In(time.FixedZone("x", 3600*int(r.IntN(25)-12)))
	}
	return time.Date(1+r.IntN(9998), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e9), time.UTC)
}

func randDecision(r *rand.Rand) Decision {
	d := Decision{
		V: r.IntN(3), RequestID: randString(r), SessionID: randString(r), Tool: randString(r),
		Outcome: Outcome(randString(r)), ReasonCode: ReasonCode(randString(r)), Reason: randString(r),
		Scope: Scope(randString(r)), GrantedPattern: randStrings(r), RejectMode: RejectMode(randString(r)),
		StopRejections: randStrings(r), Feedback: randString(r), LLMMessage: randString(r), Answer: randRaw(r),
		UpdatedArguments: randRaw(r),
		DecidedBy: Decider{Kind: DeciderKind(randString(r)), ID: randString(r), Display: randString(r),
			Channel: randString(r), Device: randString(r)},
		DecidedAt: randTime(r), PolicyVersion: randString(r),
	}
	if r.IntN(2) == 0 {
		d.DecidedBy.StepUp = &StepUp{Method: randString(r), CredentialID: randString(r), AssertedAt: randTime(r), UserVerified: r.IntN(2) == 0}
	}
	return d
}

func randRequest(r *rand.Rand) Request {
	req := Request{
		V: r.IntN(3), RequestID: randString(r), SessionID: randString(r), AgentID: randString(r),
		AgentType: randString(r), RequestedBy: randString(r), CallID: randString(r), Tool: randString(r),
		Category: Category(randString(r)), Arguments: randRaw(r), Description: randString(r), Cwd: randString(r),
		TTLMillis: r.Int64N(3) * r.Int64N(1<<40),
	}
	if r.IntN(3) == 0 {
		req.BatchRemaining = []BatchItem{}
		for range r.IntN(3) {
			req.BatchRemaining = append(req.BatchRemaining, BatchItem{Tool: randString(r), Arguments: randRaw(r)})
		}
	}
	return req
}

func randAudit(r *rand.Rand) AuditRecord {
	a := AuditRecord{V: r.IntN(3), Request: randRequest(r), Decision: randDecision(r), Replica: randString(r), Recorded: randTime(r)}
	if r.IntN(2) == 0 {
		risk := &Risk{Tier: randString(r), Rule: randString(r), Reason: randString(r), SafetyOverride: randString(r), Shell: r.IntN(2) == 0}
		for range r.IntN(3) {
			risk.Subcommands = append(risk.Subcommands, Verdict{Command: randString(r), Words: randStrings(r),
				Kind: randString(r), Action: randString(r), Rule: randString(r), Reason: randString(r)})
		}
		a.Risk = risk
	}
	for i := range r.IntN(3) {
		s := EscalationRun{Step: i + 1, At: randTime(r), AfterMS: r.Int64N(1 << 40)}
		switch r.IntN(3) {
		case 0:
			s.Remind = true
		case 1:
			s.AddTeam = randString(r)
		default:
			s.Page = randString(r)
		}
		a.Escalation = append(a.Escalation, s)
	}
	if r.IntN(2) == 0 {
		a.Mode = randString(r)
	}
	if r.IntN(2) == 0 {
		a.Shadow = &ShadowVerdict{PolicyVersion: randString(r), Action: randString(r), Live: randString(r), Rule: randString(r)}
	}
	if r.IntN(2) == 0 {
		a.Canary = &CanaryMark{ID: randString(r), PolicyVersion: randString(r)}
	}
	if r.IntN(3) == 0 {
		a.Clipped = &ClippedRecord{RecordBytes: r.IntN(1 << 21), ArgumentsBytes: r.IntN(1 << 16), ArgumentsSHA256: randString(r)}
		if raw := randRaw(r); r.IntN(2) == 0 && len(raw) > 0 {
			a.Clipped.Arguments = []byte(raw)
		}
		if r.IntN(2) == 0 {
			a.Clipped.UpdatedBytes, a.Clipped.UpdatedSHA256 = 1+r.IntN(1<<16), randString(r)
		}
	}
	return a
}

// sameAsMarshal fails unless append produces json.Marshal's bytes for v,
// or both refuse it.
func sameAsMarshal(t *testing.T, v any, appendJSON func([]byte) ([]byte, error)) {
	t.Helper()
	want, werr := json.Marshal(v)
	prefix := []byte("prefix:")
	got, gerr := appendJSON(prefix)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("json.Marshal error %v, AppendJSON error %v, for %#v", werr, gerr, v)
	}
	if werr != nil {
		return
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("AppendJSON overwrote what was in the buffer: %q", got)
	}
	if got := got[len(prefix):]; !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON and json.Marshal differ for %#v:\n got %s\nwant %s", v, got, want)
	}
}

func TestAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		d := randDecision(r)
		sameAsMarshal(t, &d, d.AppendJSON)
		rc := Receipt{V: r.IntN(3), RequestID: randString(r), State: State(randString(r)), ExpiresAt: randTime(r)}
		if r.IntN(2) == 0 {
			rc.Decision = &d
		}
		sameAsMarshal(t, &rc, rc.AppendJSON)
		req := randRequest(r)
		sameAsMarshal(t, &req, req.AppendJSON)
		a := randAudit(r)
		sameAsMarshal(t, &a, a.AppendJSON)
		batch := AuditBatch{V: r.IntN(3), Type: randString(r), SessionID: randString(r), Records: []AuditRecord{a}}
		for range r.IntN(3) {
			batch.Records = append(batch.Records, randAudit(r))
		}
		sameAsMarshal(t, &batch, batch.AppendJSON)
	}
}

// Values json.Marshal refuses are refused too, not written half-way as if
// they were fine.
func TestAppendJSONRefusesWhatMarshalRefuses(t *testing.T) {
	for name, d := range map[string]Decision{
		"invalid raw JSON": {Answer: json.RawMessage(`{"a":`)},
		"year 10000":       {DecidedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"year -1":          {DecidedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		"zone hour 24":     {DecidedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 24*3600))},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := json.Marshal(&d); err == nil {
				t.Fatal("json.Marshal accepts it: the case is wrong")
			}
			if _, err := d.AppendJSON(nil); err == nil {
				t.Fatal("AppendJSON accepted what json.Marshal refuses")
			}
		})
	}
}

// FuzzAppendJSON puts arbitrary text in every string field and arbitrary
// bytes in the raw JSON fields.
func FuzzAppendJSON(f *testing.F) {
	f.Add("ls -la", `{"command":"ls -la"}`, int64(0))
	f.Add("a<b>&\u2028\xff\"\\\n", "{ \"a\" :\t\"<\" }", int64(1700000000123456789))
	f.Add("", `not json`, int64(-1))
	f.Fuzz(func(t *testing.T, s, raw string, nanos int64) {
		at := time.Unix(0, nanos).UTC()
		d := Decision{V: 1, RequestID: s, SessionID: s, Tool: s, Outcome: Outcome(s), ReasonCode: ReasonCode(s),
			Reason: s, GrantedPattern: []string{s, s}, Feedback: s, LLMMessage: s, Answer: json.RawMessage(raw),
			DecidedBy: Decider{Kind: DeciderKind(s), ID: s}, DecidedAt: at}
		if raw == "" {
			d.Answer = nil
		}
		sameAsMarshal(t, &d, d.AppendJSON)
		a := AuditRecord{V: 1, Request: Request{RequestID: s, Tool: s, Arguments: d.Answer, Description: s,
			BatchRemaining: []BatchItem{{Tool: s, Arguments: d.Answer}}},
			Decision: d, Risk: &Risk{Tier: s, Subcommands: []Verdict{{Command: s, Words: []string{s}}}}, Recorded: at}
		sameAsMarshal(t, &a, a.AppendJSON)
		b := AuditBatch{V: 1, Type: s, SessionID: s, Records: []AuditRecord{a, a}}
		sameAsMarshal(t, &b, b.AppendJSON)
	})
}

// TestAppendAuditBatchJoinsEncodedRecords: a batch joined from records
// encoded one by one is the batch encoded whole.
func TestAppendAuditBatchJoinsEncodedRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := AuditBatch{V: Version, Type: AuditBatchType, SessionID: randString(r)}
		var parts [][]byte
		for range 1 + r.IntN(4) {
			a := randAudit(r)
			data, err := a.AppendJSON(nil)
			if err != nil {
				continue // a value json.Marshal refuses too
			}
			b.Records = append(b.Records, a)
			parts = append(parts, data)
		}
		want, err := b.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendAuditBatch(nil, b.SessionID, parts); !bytes.Equal(got, want) {
			t.Fatalf("joined:\n%s\nwhole:\n%s", got, want)
		}
	}
}
