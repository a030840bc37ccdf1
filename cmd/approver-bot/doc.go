// Command approver-bot shows a Signoff plane's questions to the humans who
// approve tool calls — in a terminal, on a web page, in Slack, in Telegram or
// through a signed webhook — and sends their answers with the identity of
// the approver who gave them. See docs/APPROVERS.md.
package main
