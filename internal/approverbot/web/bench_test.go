package web

import (
	"testing"
)

// BenchmarkQuestionView measures rendering one card (the work done per open
// page for every question event and per question of GET /api/questions).
func BenchmarkQuestionView(b *testing.B) {
	ch, err := New(testConfig(b, "", "{}"), Options{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	q := hostileQuestion()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ch.questionView(q, "alice"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHubPublish measures handing one event to 100 open pages.
func BenchmarkHubPublish(b *testing.B) {
	h := newHub()
	subs := make([]*subscriber, 100)
	for i := range subs {
		subs[i], _ = h.subscribe("", "alice")
	}
	q := question("req-1", "make deploy")
	e := event{question: &q}
	b.ReportAllocs()
	for b.Loop() {
		h.publish(e)
		for _, s := range subs {
			<-s.events
		}
	}
}
