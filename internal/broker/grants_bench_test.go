package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// BenchmarkBrokerGrantAllow is the automatic path of a call that a standing
// grant allows: a session grant of "make deploy", then the same command
// again and again (the Lookup reads the grants; the rule checks them).
// docs/BENCHMARKS.md compares it with the code before grants were objects.
func BenchmarkBrokerGrantAllow(b *testing.B) {
	p := brokertest.Start(b, brokertest.Options{Replicas: 1, Redis: true})
	dev := p.Approver("default")
	c := p.Agent("s-bench", "pod-1")
	setup := brokertest.Ask(context.Background(), c, "grant-setup", "bash", brokertest.Bash("make deploy"))
	dev.Approve(dev.NextAsk("grant-setup"), "alice", messages.ScopeSession)
	brokertest.WantDecision(b, setup.Wait(b), messages.OutcomeAllow, messages.ReasonApproved)

	agent := p.NATS.Connect(b)
	granted := []byte(`"reason_code":"scope_grant"`)
	subject := p.Subjects.Req("s-bench")
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = benchRequest(fmt.Sprintf("%s-g%d", m.name, i), "make deploy")
			}
			benchLatencies(b, m.workers, func(i int) error {
				msg, err := agent.Request(subject, bodies[i], 5*time.Second)
				if err != nil {
					return err
				}
				if !bytes.Contains(msg.Data, granted) {
					return fmt.Errorf("receipt %s", msg.Data)
				}
				return nil
			})
		})
	}
}
