package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/integration/internal/plane"
	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// testTwoDevices has two approver devices — alice's laptop on nats-1 and
// bob's phone on the last node, so their answers reach different brokers —
// answer the same question at the same instant, one approving and the
// other rejecting, round after round. Each time exactly one answer is
// applied, the other is told the standing decision, the agent gets the
// applied one, one decision is published and the audit stream holds one
// record.
func testTwoDevices(t *testing.T, h *harness) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := h.name("devices")
	laptop := h.p.ConnectVia(t, 1, name+"-alice-laptop")
	phone := h.p.ConnectVia(t, len(h.p.NATS), name+"-bob-phone")
	laptopQs, phoneQs := newQuestionTap(t, laptop), newQuestionTap(t, phone)
	ledger := workload.NewLedger()
	stop, err := workload.Observe(h.p.Connect(t, name+"-observer"), messages.DefaultPrefix, name, ledger)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(h.p.Connect(t, name+"-agent"), client.WithSession(name), client.WithAgent(name+"-pod"),
		client.WithRequestedBy("agent-user"), client.WithAttemptTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}

	const rounds = 20
	wins := map[string]int{}
	for i := range rounds {
		call := workload.CallFor(workload.KindAsk, fmt.Sprintf("race%d", i))
		call.RequestID = fmt.Sprintf("%s-r%d", name, i)
		ledger.Begin(call.RequestID, name, name+"-pod", workload.KindAsk)
		done := make(chan struct{})
		go func() {
			d, err := c.Request(ctx, call)
			ledger.Finish(call.RequestID, d, err)
			close(done)
		}()
		qs := []messages.ApprovalNeeded{laptopQs.next(t, call.RequestID), phoneQs.next(t, call.RequestID)}
		devices := []struct {
			id, device string
			conn       *nats.Conn
		}{{"alice", "laptop", laptop}, {"bob", "phone", phone}}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j, dev := range devices {
			ledger.Question(call.RequestID)
			approve := (i+j)%2 == 0 // they disagree: one approves, the other rejects
			r := messages.Response{Approver: messages.Approver{ID: dev.id, Device: dev.device}, Approved: approve}
			if !approve {
				r.RejectMode = messages.RejectSoft
			}
			r = response(qs[j], r)
			wg.Go(func() {
				<-start
				rep, err := workload.Respond(ctx, dev.conn, messages.DefaultPrefix, r, 2*time.Second)
				a := workload.Answer{Approver: dev.id, Device: dev.device, Approved: approve, RejectMode: r.RejectMode, Err: err, At: time.Now()}
				if err == nil {
					a.Reply = &rep
				}
				ledger.Answered(call.RequestID, a)
			})
		}
		close(start)
		wg.Wait()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("round %d: the agent got no decision", i)
		}
	}
	time.Sleep(200 * time.Millisecond) // let the last publications arrive
	stop()

	if problems := ledger.Check(workload.Tolerance{}); len(problems) > 0 {
		t.Errorf("invariant violations:\n%s", joinLines(problems))
	}
	for _, e := range ledger.Entries() {
		applied := e.Applied()
		if len(applied) != 1 {
			t.Errorf("%s: %d answers applied, want exactly 1 (answers: %+v)", e.ID, len(applied), e.Answers)
			continue
		}
		wins[applied[0].Approver+" on "+applied[0].Device]++
		if len(e.Published) != 1 {
			t.Errorf("%s: %d decisions published, want 1", e.ID, len(e.Published))
		}
	}
	t.Logf("%d races: applied answers by device %v", rounds, wins)

	// The audit stream holds exactly one human decision per request.
	perRequest := auditRecords(ctx, t, h, name, rounds)
	for i := range rounds {
		id := fmt.Sprintf("%s-r%d", name, i)
		if n := perRequest[id]; n != 1 {
			t.Errorf("%s: %d audit records, want 1", id, n)
		}
	}
}

// auditRecords reads the audit stream's records of session (waiting up to
// 5 s for at least want of them: appends are asynchronous) and counts them
// per request id.
func auditRecords(ctx context.Context, t *testing.T, h *harness, session string, want int) map[string]int {
	t.Helper()
	return auditRecordsOf(ctx, t, h, []string{session}, want)
}

// auditRecordsOf is auditRecords over several sessions at once.
func auditRecordsOf(ctx context.Context, t *testing.T, h *harness, sessions []string, want int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for id, reasons := range auditReasonsOf(ctx, t, h, sessions, want) {
		counts[id] = len(reasons)
	}
	return counts
}

// auditReasonsOf reads the audit records of sessions like auditRecordsOf
// and returns each request's records' reason codes, in stream order.
func auditReasonsOf(ctx context.Context, t *testing.T, h *harness, sessions []string, want int) map[string][]messages.ReasonCode {
	t.Helper()
	js, err := jetstream.New(h.p.Connect(t, sessions[0]+"-audit-reader"))
	if err != nil {
		t.Fatal(err)
	}
	subjects := make([]string, len(sessions))
	for i, s := range sessions {
		subjects[i] = messages.DefaultPrefix + ".audit." + s
	}
	deadline := time.Now().Add(5 * time.Second)
	// A JetStream that is electing (right after a node of the cluster
	// was frozen or killed) answers 503 for a while: the reader retries
	// what a real audit consumer would, for up to 30 s.
	unavailableUntil := time.Now().Add(30 * time.Second)
	for {
		reasons, total, err := readAuditReasons(ctx, js, subjects)
		if err != nil {
			if !jetStreamUnavailable(err) || time.Now().After(unavailableUntil) {
				t.Fatalf("audit reader: %v", err)
			}
			t.Logf("audit reader: %v (retrying)", err)
			time.Sleep(time.Second)
			continue
		}
		if total >= want || time.Now().After(deadline) {
			return reasons
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readAuditReasons reads every audit record on subjects once, through a
// new ordered consumer, and returns each request's reason codes and the
// number of records read.
func readAuditReasons(ctx context.Context, js jetstream.JetStream, subjects []string) (map[string][]messages.ReasonCode, int, error) {
	cons, err := js.OrderedConsumer(ctx, messages.AuditStream, jetstream.OrderedConsumerConfig{FilterSubjects: subjects})
	if err != nil {
		return nil, 0, fmt.Errorf("audit consumer: %w", err)
	}
	reasons, total := map[string][]messages.ReasonCode{}, 0
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			return nil, 0, fmt.Errorf("audit fetch: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			recs, err := messages.AuditRecords(m.Data())
			if err != nil {
				return nil, 0, fmt.Errorf("audit message %d of %s: %w", n, m.Subject(), err)
			}
			for _, rec := range recs {
				reasons[rec.Decision.RequestID] = append(reasons[rec.Decision.RequestID], rec.Decision.ReasonCode)
				total++
			}
		}
		if n == 0 {
			return reasons, total, nil
		}
	}
}

// jetStreamUnavailable reports whether err is one JetStream gives while
// its cluster elects leaders: an API 503, no responders, a timeout.
func jetStreamUnavailable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 503
	}
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, context.DeadlineExceeded)
}

// testTwoWebDevices does the same race through the approvers' web page:
// alice signs in on approver bot A (on nats-1) from her laptop, bob on
// approver bot B (on the last node) from his phone; both see the question
// in GET /api/questions and POST /api/respond at the same instant, one
// approving and the other rejecting. Exactly one answer is applied.
func testTwoWebDevices(t *testing.T, h *harness) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hashes := map[string][]byte{}
	for _, who := range []string{"alice", "bob"} {
		hash, err := bcrypt.GenerateFromPassword([]byte(who+"-password"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		hashes[who] = hash
	}
	body := fmt.Sprintf("teams: [default]\napprovers:\n  alice: { display: Alice, password_hash: %q }\n  bob: { display: Bob, password_hash: %q }\nweb:\n  insecure_cookies: true\n",
		hashes["alice"], hashes["bob"])
	bots := make([]*plane.Node, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, node := range []int{1, len(h.p.NATS)} {
		wg.Go(func() {
			bots[i], errs[i] = h.p.StartApproverBot(ctx, t, fmt.Sprintf("approver-bot-%c", 'a'+i), plane.ApproverBotConfig(node, body))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	laptop := newWebDevice(ctx, t, bots[0], "alice", "laptop")
	phone := newWebDevice(ctx, t, bots[1], "bob", "phone")

	name := h.name("web")
	c, err := client.New(h.p.Connect(t, name+"-agent"), client.WithSession(name), client.WithAgent(name+"-pod"),
		client.WithRequestedBy("agent-user"), client.WithAttemptTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 4
	for i := range rounds {
		call := workload.CallFor(workload.KindAsk, fmt.Sprintf("web%d", i))
		call.RequestID = fmt.Sprintf("%s-r%d", name, i)
		got := requestAsync(ctx, c, call)
		laptop.waitQuestion(ctx, t, call.RequestID)
		phone.waitQuestion(ctx, t, call.RequestID)

		devices := []*webDevice{laptop, phone}
		results := make([]webResult, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j, dev := range devices {
			action := "approve"
			if (i+j)%2 == 1 {
				action = "reject_soft"
			}
			wg.Go(func() {
				<-start
				results[j] = dev.respond(ctx, call.RequestID, action)
			})
		}
		close(start)
		wg.Wait()
		d := (<-got).decision(t, fmt.Sprintf("round %d", i))
		applied := 0
		for j, r := range results {
			if r.err != nil {
				t.Errorf("round %d: %s's answer: %v", i, devices[j].approver, r.err)
				continue
			}
			if r.Applied {
				applied++
				want := messages.OutcomeAllow
				if r.action != "approve" {
					want = messages.OutcomeDeny
				}
				if d.Outcome != want || d.DecidedBy.ID != devices[j].approver || d.DecidedBy.Channel != "web" {
					t.Errorf("round %d: %s's %s was applied, the agent got %s by %s via %s", i, devices[j].approver, r.action, d.Outcome, d.DecidedBy.ID, d.DecidedBy.Channel)
				}
			} else if r.Decision == nil || r.Decision.Outcome != d.Outcome {
				t.Errorf("round %d: %s's refused answer was not told the standing decision %s: %+v", i, devices[j].approver, d.Outcome, r.RespondReply)
			}
		}
		if applied != 1 {
			t.Errorf("round %d: %d answers applied, want exactly 1: %+v", i, applied, results)
		}
		t.Logf("round %d: laptop %s applied=%v, phone %s applied=%v; the agent got %s by %s", i,
			results[0].action, results[0].Applied, results[1].action, results[1].Applied, d.Outcome, d.DecidedBy.ID)
	}
}

// webDevice is a browser signed in to an approver bot's web page: a cookie
// jar and the session's CSRF token.
type webDevice struct {
	approver, device, base, csrf string
	http                         *http.Client
}

func newWebDevice(ctx context.Context, t *testing.T, bot *plane.Node, approver, device string) *webDevice {
	t.Helper()
	base, err := bot.HTTPURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	d := &webDevice{approver: approver, device: device, base: base, http: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
	var login struct {
		CSRFToken string `json:"csrf_token"`
	}
	status, err := d.do(ctx, http.MethodPost, "/login", map[string]string{"approver": approver, "password": approver + "-password"}, &login)
	if err != nil || status != http.StatusOK || login.CSRFToken == "" {
		t.Fatalf("%s signs in on %s: %d %v", approver, base, status, err)
	}
	d.csrf = login.CSRFToken
	return d
}

func (d *webDevice) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "signoff-integration/"+d.device)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.csrf != "" {
		req.Header.Set("X-CSRF-Token", d.csrf)
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// waitQuestion polls GET /api/questions until request id is listed.
func (d *webDevice) waitQuestion(ctx context.Context, t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct {
			Questions []struct {
				RequestID string `json:"request_id"`
			} `json:"questions"`
		}
		if _, err := d.do(ctx, http.MethodGet, "/api/questions", nil, &list); err != nil {
			t.Fatalf("%s lists questions: %v", d.approver, err)
		}
		for _, q := range list.Questions {
			if q.RequestID == id {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's %s never listed question %s", d.approver, d.device, id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// webResult is a POST /api/respond reply.
type webResult struct {
	messages.RespondReply
	action string
	err    error
}

func (d *webDevice) respond(ctx context.Context, id, action string) webResult {
	r := webResult{action: action}
	_, r.err = d.do(ctx, http.MethodPost, "/api/respond", map[string]string{"request_id": id, "action": action, "device": d.device}, &r.RespondReply)
	return r
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
