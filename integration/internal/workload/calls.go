package workload

import (
	"fmt"
	"hash/fnv"

	"github.com/signoff-dev/signoff/pkg/client"
)

// Policy is the broker policy of the suite: three shell rules whose
// decisions the ledger can predict, and the default team {alice, bob}.
// Questions wait 20 s (a request may ask for up to 2 min).
const Policy = `# The end-to-end suite's policy (integration/internal/workload).
mode: auto-edit
ttl: 20s
max_ttl: 2m
teams:
  default: { members: [alice, bob] }
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(rm *)", action: deny, reason: "rm is not allowed in the suite" }
  - { rule: "bash(make *)", action: ask, grantable: true }
# Agents of type outbreak only (integration/fleet_test.go): three of them
# hitting the rm deny trip it; no other scenario's agents count or drop.
breakers:
  - { name: outbreak, rules: ["bash(rm *)"], agents: 3, window: 1m, select: { agent_type: outbreak } }
`

// Kind is what the suite's policy decides for a call.
type Kind string

// Kinds.
const (
	KindAllow Kind = "allow" // a policy allow
	KindDeny  Kind = "deny"  // a policy deny
	KindAsk   Kind = "ask"   // a question for the default team
)

// CallFor returns a call of kind k; tag makes its arguments unique.
func CallFor(k Kind, tag string) client.Call {
	var cmd string
	switch k {
	case KindAllow:
		cmd = "ls -la /srv/" + tag
	case KindDeny:
		cmd = "rm -rf /srv/" + tag
	case KindAsk:
		cmd = "make deploy-" + tag
	default:
		panic(fmt.Sprintf("workload: unknown kind %q", k))
	}
	return client.Call{Tool: "bash", Arguments: map[string]string{"command": cmd}, Description: string(k) + " " + tag}
}

// Mixed is the traffic mix of the suite: of every ten requests five are
// policy allows, two policy denies and three questions, spread so that
// agents do not all ask at the same moment.
func Mixed(agent, n int) Kind {
	switch (agent*3 + n) % 10 {
	case 0, 3, 5, 7, 9:
		return KindAllow
	case 2, 6:
		return KindDeny
	default:
		return KindAsk
	}
}

// Split returns a mix in which the agents below split follow Mixed and the
// others never ask a human (two policy allows for one policy deny): those
// keep requests flowing while the first ones wait on their questions, so a
// fault always meets traffic.
func Split(split int) func(agent, n int) Kind {
	return func(agent, n int) Kind {
		switch {
		case agent < split:
			return Mixed(agent, n)
		case (agent+n)%3 == 0:
			return KindDeny
		default:
			return KindAllow
		}
	}
}

// Approves is the answer the suite's approvers give to request id: one in
// four is rejected (reject_soft, which does not stop the session), the rest
// approved once. Being a function of the id alone, every approver device
// gives the same answer and the ledger can predict it.
func Approves(id string) bool {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return h.Sum32()%4 != 0
}
