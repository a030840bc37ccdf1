package hook

// refusal begins the reason of a blocking refusal of event, which the host
// shows: a gated event's is the denial of its tool call; a prompt's needs
// no preamble; any other event (one the hook does not know, or input it
// could not read) is not spoken of as a tool call, as it may not be one.
func (h Host) refusal(event string) string {
	switch h.eventKind(event) {
	case kindGate:
		return "Signoff denied this tool call: "
	case kindTurn:
		return ""
	}
	return "Signoff blocked this hook event: "
}
