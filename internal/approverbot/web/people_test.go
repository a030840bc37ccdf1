package web

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// peopleRecords reads every record on the audit stream's people subjects.
func (r *rig) peopleRecords(t *testing.T) []messages.PersonEvent {
	t.Helper()
	js, err := jetstream.New(r.plane.NATS.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(t.Context(), messages.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []messages.PersonEvent
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		msg, err := stream.GetMsg(t.Context(), seq)
		if err != nil || msg.Subject != r.plane.Subjects.AuditPeople(Name) {
			continue
		}
		var e messages.PersonEvent
		if err := json.Unmarshal(msg.Data, &e); err != nil {
			t.Fatalf("person record %s: %v", msg.Data, err)
		}
		out = append(out, e)
	}
	return out
}

func TestSignInsFailuresAndSignOutsAreInTheAuditStreamBesideTheDecisions(t *testing.T) {
	r := startRig(t, 1, "[default]", Options{})
	c := r.client(t)
	res := r.do(t, c, "POST", "/login", `{"approver":"alice","password":"wrong"}`,
		"Content-Type", "application/json", "Accept", "application/json", "User-Agent", "attacker-script/1.0")
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %s", res.Status)
	}
	alice, csrf := r.login(t, "alice", alicePassword)
	if res := r.do(t, alice, "POST", "/logout", "", csrfHeader, csrf); res.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %s", res.Status)
	}

	got := r.peopleRecords(t)
	want := []struct {
		kind     messages.PersonEventKind
		approver string
	}{{messages.PersonSignInFailed, "alice"}, {messages.PersonSignIn, "alice"}, {messages.PersonSignOut, "alice"}}
	if len(got) != len(want) {
		t.Fatalf("people's records = %+v, want %d (a failed sign-in, a sign-in, a sign-out)", got, len(want))
	}
	for i, w := range want {
		e := got[i]
		if e.Kind != w.kind || e.Approver != w.approver || e.Channel != Name || e.Method != "password" ||
			e.Remote != "127.0.0.1" || e.At.IsZero() {
			t.Errorf("record %d = %+v, want %s of %s by password from 127.0.0.1", i, e, w.kind, w.approver)
		}
	}
	if got[0].UserAgent != "attacker-script/1.0" || got[0].Detail == "" {
		t.Errorf("the failed sign-in's record = %+v, want its User-Agent and why it failed", got[0])
	}
}

func TestAPersonEventTheBrokersCannotDecodeIsRefused(t *testing.T) {
	r := startRig(t, 1, "[default]", Options{})
	nc := r.plane.NATS.Connect(t)
	for _, body := range []string{
		`{"v":1,"kind":"became_admin","channel":"web","at":"2026-01-01T00:00:00Z"}`,
		`{"v":1,"kind":"sign_in","channel":"web.x","at":"2026-01-01T00:00:00Z"}`,
		`{"v":1,"kind":"sign_in","channel":"web"}`,
	} {
		msg, err := nc.Request(r.plane.Subjects.People(), []byte(body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := messages.IsErrorReply(msg.Data); !ok {
			t.Errorf("%s: reply %s, want an error reply", body, msg.Data)
		}
	}
	if got := r.peopleRecords(t); len(got) != 0 {
		t.Errorf("refused events were stored: %+v", got)
	}
}
