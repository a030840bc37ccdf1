package broker_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The delayed turn, made deterministic: the agent sent a tracked turn
// before it heard of a reject_hard, and the turn reached a broker only
// after the rejection was carried out and acknowledged (it sat in the
// client's retries while no broker answered). It names nothing, so it
// ends nothing: the reply names the rejection, the agent's next call —
// here from a client that restarted and remembers nothing — is denied
// hard_stop naming it, and the turn the agent then sends, which names
// it, ends the stop. An untracked turn (a hook, an older client) still
// ends it as before.
func TestADelayedTrackedTurnDoesNotEndAStopItsAgentHadNotHeardOf(t *testing.T) {
	for _, o := range []brokertest.Options{{}, {Redis: true}} {
		t.Run(map[bool]string{false: "memory", true: "redis"}[o.Redis], func(t *testing.T) {
			p := brokertest.Start(t, o)
			dev := p.Approver("default")
			turn := func(sess, body string) messages.TurnReply {
				t.Helper()
				var rep messages.TurnReply
				if err := json.Unmarshal(p.RawRequest(messages.Subjects{}.Turn(sess), []byte(body)), &rep); err != nil {
					t.Fatal(err)
				}
				return rep
			}
			hardReject := func(c *client.Client, id string) {
				t.Helper()
				pending := brokertest.Ask(t.Context(), c, id, "bash", brokertest.Bash("make deploy"))
				if rep := dev.Reject(dev.NextAsk(id), "alice", messages.RejectHard, "stop"); !rep.Applied {
					t.Fatalf("reject: %+v", rep)
				}
				d := pending.Wait(t)
				brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
			}
			call := func(c *client.Client) *messages.Decision {
				t.Helper()
				d, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
				if err != nil {
					t.Fatal(err)
				}
				return d
			}

			hardReject(p.Agent("s-late", "pod-1"), "late-1")
			rep := turn("s-late", `{"v":1,"seen_complete":true}`)
			if rep.StopCleared || !slices.Equal(rep.Unheard, []string{"late-1"}) {
				t.Fatalf("the delayed turn's reply %+v; want the stop kept, unheard [late-1]", rep)
			}
			if rep := turn("s-late", `{"v":1,"seen":["other"],"seen_complete":true}`); rep.StopCleared {
				t.Fatalf("a turn naming another rejection ended the stop: %+v", rep)
			}
			restarted := p.Agent("s-late", "pod-1")
			d := call(restarted)
			brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonHardStop)
			if !slices.Equal(d.StopRejections, []string{"late-1"}) {
				t.Fatalf("hard_stop deny names %v; want [late-1]", d.StopRejections)
			}
			if cleared, err := restarted.NewTurn(t.Context()); err != nil || !cleared {
				t.Fatalf("the turn after the agent heard of it = %v, %v; want the stop cleared", cleared, err)
			}
			brokertest.WantDecision(t, call(restarted), messages.OutcomeAllow, messages.ReasonPolicyAllow)

			hardReject(p.Agent("s-hook", "pod-2"), "hook-1")
			if rep := turn("s-hook", `{"v":1}`); !rep.StopCleared || len(rep.Unheard) != 0 {
				t.Fatalf("an untracked turn's reply %+v; want the stop cleared", rep)
			}
		})
	}
}
