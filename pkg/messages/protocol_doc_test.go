package messages

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The protocol document is what implementers in other languages copy from,
// so its examples are checked against the codec here.

func readProtocolDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../docs/PROTOCOL.md")
	if err != nil {
		t.Fatalf("reading the protocol document: %v", err)
	}
	return string(data)
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

func TestProtocolDocJSONExamplesAreValidVersion1Messages(t *testing.T) {
	blocks := jsonBlock.FindAllStringSubmatch(readProtocolDoc(t), -1)
	if len(blocks) < 15 {
		t.Fatalf("found %d JSON examples, expected every message to have one", len(blocks))
	}
	for _, b := range blocks {
		body := b[1]
		var v struct {
			V *int `json:"v"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("example is not valid JSON: %v\n%s", err, body)
			continue
		}
		if v.V == nil || *v.V != Version {
			t.Errorf("example has no \"v\": 1:\n%s", body)
		}
	}
}

// cliPayload matches the payload of a `nats req <subject> '<json>'` line.
var cliPayload = regexp.MustCompile(`nats -s \S+ req (\S+) \\?\s*'([^']*)'`)

func TestProtocolDocCLIRequestsDecode(t *testing.T) {
	doc := readProtocolDoc(t)
	matches := cliPayload.FindAllStringSubmatch(doc, -1)
	if len(matches) < 5 {
		t.Fatalf("found %d nats req commands in the CLI walkthrough, expected at least 5", len(matches))
	}
	s := Subjects{}
	for _, m := range matches {
		subject, payload := m[1], []byte(m[2])
		ps, err := s.Parse(subject)
		if err != nil {
			t.Errorf("nats req %s: %v", subject, err)
			continue
		}
		switch ps.Kind {
		case SubjectReq:
			req, err := Decode[Request](payload, 0)
			// The walkthrough shows one deliberately invalid request.
			if strings.Contains(string(payload), `"tool":""`) {
				if err == nil {
					t.Errorf("the invalid example decodes: %s", payload)
				}
				continue
			}
			if err != nil {
				t.Errorf("nats req %s: %v\n%s", subject, err, payload)
				continue
			}
			if err := s.CheckSession(SubjectReq, subject, req.SessionID); err != nil {
				t.Errorf("nats req %s: %v", subject, err)
			}
		case SubjectRespond:
			if _, err := Decode[Response](payload, 0); err != nil {
				t.Errorf("nats req %s: %v\n%s", subject, err, payload)
			}
		case SubjectStatus:
			if _, err := Decode[StatusRequest](payload, 0); err != nil {
				t.Errorf("nats req %s: %v\n%s", subject, err, payload)
			}
		default:
			t.Errorf("nats req %s: no check for %s subjects", subject, ps.Kind)
		}
	}
}

// decodeDocExample decodes a complete example with the type its fields say
// it is, as a receiver would. It returns false for shapes it cannot tell.
func decodeDocExample(data []byte) (bool, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return true, err
	}
	has := func(k string) bool { return keys[k] != nil }
	var err error
	switch {
	case has("error"):
		if _, ok := IsErrorReply(data); !ok {
			err = errors.New("not recognised as an error reply")
		}
	case string(keys["type"]) == `"approval_needed"`:
		_, err = Decode[ApprovalNeeded](data, 0)
	case string(keys["type"]) == `"resolved"`:
		_, err = Decode[Resolved](data, 0)
	case string(keys["type"]) == `"grant_event"`:
		_, err = Decode[GrantEvent](data, 0)
	case string(keys["type"]) == `"audit_batch"`:
		_, err = Decode[AuditBatch](data, 0)
	case has("recorded"):
		_, err = Decode[AuditRecord](data, 0)
	case has("applied"):
		_, err = Decode[RespondReply](data, 0)
	case has("approver"):
		_, err = Decode[Response](data, 0)
	case has("outcome"):
		_, err = Decode[Decision](data, 0)
	case has("state"):
		_, err = Decode[Receipt](data, 0)
	case has("tool"):
		_, err = Decode[Request](data, 0)
	case has("request_ids"):
		_, err = Decode[CancelRequest](data, 0)
	case has("cancelled"):
		_, err = Decode[CancelReply](data, 0)
	case has("stop_cleared"):
		_, err = Decode[TurnReply](data, 0)
	case has("ok"):
		_, err = Decode[AdminReply](data, 0)
	case has("mode"), has("grant_id"), has("by"), has("teams"), has("selector"):
		_, err = Decode[AdminRequest](data, 0)
	case has("request_id") && len(keys) == 2:
		_, err = Decode[StatusRequest](data, 0)
	case len(keys) == 1, has("seen"):
		_, err = Decode[TurnRequest](data, 0)
	default:
		return false, nil
	}
	return true, err
}

func TestProtocolDocCompleteJSONExamplesDecode(t *testing.T) {
	checked := 0
	for _, b := range jsonBlock.FindAllStringSubmatch(readProtocolDoc(t), -1) {
		if strings.Contains(b[1], "…") {
			continue
		}
		known, err := decodeDocExample([]byte(b[1]))
		if !known {
			t.Errorf("cannot tell which message this example is:\n%s", b[1])
		}
		if err != nil {
			t.Errorf("%v\n%s", err, b[1])
		}
		checked++
	}
	if checked < 12 {
		t.Errorf("checked %d complete examples, expected one per message", checked)
	}
}

// TestProtocolDocBrokerOutputsDecode checks the complete broker messages the
// walkthrough shows (one JSON object per line, no "…" elisions) with the
// decoder an approver or agent would use.
func TestProtocolDocBrokerOutputsDecode(t *testing.T) {
	checked := 0
	for line := range strings.Lines(readProtocolDoc(t)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, `{"v":1,`) || strings.Contains(line, "…") {
			continue
		}
		known, err := decodeDocExample([]byte(line))
		// The walkthrough shows one deliberately invalid request.
		if strings.Contains(line, `"tool":""`) {
			if err == nil {
				t.Errorf("the invalid example decodes: %s", line)
			}
			continue
		}
		if !known {
			continue
		}
		if err != nil {
			t.Errorf("%v\n%s", err, line)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("checked %d broker outputs, expected the walkthrough's", checked)
	}
}
