package approverbot

import "strconv"

// ReminderText is the message a channel adds for an escalation's reminder
// (ApprovalNeeded.Reminder): the question above is still waiting. It holds
// nothing an agent wrote (channels render it as markup), only the team.
func ReminderText(q Question) string {
	n := ""
	if q.Reminder > 1 {
		n = " " + strconv.Itoa(q.Reminder)
	}
	return "Reminder" + n + ": this question for team " + q.Team + " is still waiting for an answer."
}
