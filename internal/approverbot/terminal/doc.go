// Package terminal provides the approver bot's terminal channel: one
// operator answers questions at an interactive prompt.
//
// Questions are shown as they arrive and prompted one at a time, oldest
// first. The prompt takes one key:
//
//	y  approve once
//	s  approve for the session
//	a  approve always (the card's always row says exactly what it grants,
//	   the keys line by count; absent when the question offers no Always);
//	   it shows the grant and waits for the other case of the key that
//	   opened it (a → A; A, under Caps Lock → a): one key twice never grants
//	n  reject (soft): the agent skips the call and goes on; asks for feedback
//	x  reject and stop (hard): the agent ends its turn; asks for feedback
//	e  approve with changes: edit the command (or the arguments as JSON)
//	   on one line and approve the changed call once; absent on questions
//	   that need several approvals
//	k  skip: move on, the question comes back after the others
//	?  help
//
// When the input is a terminal it is put in raw mode (a key needs no Enter)
// and restored when [Channel.Run] returns; otherwise each key is read as a
// line (a key followed by Enter), which is how a pipe or a script answers.
// Colours are used only when the output is a terminal and NO_COLOR is unset.
//
// The prompt names its question on the line above its keys ("answering:
// bash make deploy"), and after output about other questions (a notice, a
// settlement) says the current question's verdict again before its keys.
// The line the cursor sits on is drawn from the mode the keys are in, by
// the prompt and by the countdown's redraws alike. A question that takes
// the place of one that left the prompt without this operator's answer
// (settled elsewhere, withdrawn) says so and what differs above its keys,
// which wait [Options.SwapGuard] before they answer it.
// A card taller than the screen, counted in rows at the terminal's width,
// ends with its verdict again ("again"). Argument values are shown with
// their JSON type (strings quoted).
//
// Every answer, and every question settled elsewhere, prints one log line
// naming the call:
//
//	✓ bash make deploy approved (session)
//	✗ bash npm install rejected: Use yarn
//	⏭ bash make deploy decided by alice via web (approved)
//
// Text that comes from agents (arguments, descriptions, tool names) is
// printed with control and bidi characters escaped, so a request cannot move
// the cursor, recolour or rewrite the prompt.
package terminal
