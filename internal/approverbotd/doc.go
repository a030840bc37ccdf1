// Package approverbotd assembles the approver bot: it connects to NATS,
// builds the channels the config enables (every channel registered with
// the approverbot core; this package imports the built-in ones), serves
// the shared HTTP listener with /healthz, /readyz and /metrics, runs the
// bot and shuts it all down in order. cmd/approver-bot only parses its
// command line and calls [Run], as cmd/broker calls internal/brokerd.
package approverbotd
