// Package channeltest is the conformance suite of approver bot channels, as
// pkg/session/storetest is the stores': every channel passes it with its
// fake service. It runs a real plane (embedded NATS, a broker) and a bot
// with the channel under test, and checks what every channel owes its
// users: the question shown with every fact, each control sending the
// right answer, a resolution taking the controls away, a refused answer
// shown, no secret in the logs, and ill health reported while the channel
// cannot reach its service.
//
// A channel's test implements [Harness] over its fake and calls [Run].
package channeltest
