// Command agent is a demo agent: it asks a Signoff broker about a batch of
// tool calls, as a coding agent would before running them, and prints what
// it was told. Run the broker first (`make run`), then `go run ./examples/agent`.
package main
