// Package messages provides Signoff's wire contract: the JSON messages that
// agents, brokers and approvers exchange over NATS, their validation, the
// subject builders and parsers, and the error reply shape. It depends on the
// standard library only.
//
// Every message is a JSON object with snake_case field names and "v":1
// ([Version]). Receive with [Decode], which enforces a size limit, the
// version and the message's Validate method; send with [Encode], which stamps
// the version and validates too. A message that cannot be handled is
// answered with an [ErrorReply] built by [ErrorReplyFor]; a client detects
// one with [IsErrorReply] and tests it with errors.Is against the sentinels
// of errors.go.
//
// [Subjects] builds the subjects of a deployment ("signoff.v1.req.<session>",
// …) and parses received ones. Session ids, request ids, agent ids and team
// names travel in subjects and must pass [ValidateToken].
//
// The texts an agent hands its LLM for a call that is not run come from the
// LLMMessage functions (llm.go), so every component uses the same words.
//
// docs/PROTOCOL.md describes the protocol for implementers in other
// languages.
package messages
