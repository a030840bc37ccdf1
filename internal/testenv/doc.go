// Package testenv provides the real servers that Signoff's tests run
// against: a redis-server process on a free loopback port ([Redis]) and an
// embedded NATS server with JetStream ([NATS]), a cluster of embedded
// servers configured with tenant accounts ([NATSAccountsCluster], [Accounts]), and [LogBuffer], a log sink
// that several goroutines may write while the test reads it.
//
// Both are owned by the test that starts them: t.Cleanup stops them and
// removes their files. A test that needs redis-server fails (it never
// skips) when the binary is missing, with a message that says how to
// install it: a skipped test is not a passing one.
//
// The package imports no Signoff package, so every test in the module can
// use it.
package testenv
