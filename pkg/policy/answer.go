package policy

import (
	"maps"
	"slices"

	"gopkg.in/yaml.v3"
)

// builtinAnswerTools are the ask-user class tools every policy knows: their
// output is what the human answers (seed 002: the answer channel), so an
// approver's answer replaces running them. Claude Code's AskUserQuestion,
// and the ask tools of other agents.
var builtinAnswerTools = []string{"askuserquestion", "ask_user", "ask_user_question", "ask_followup_question"}

// AnswersUser reports whether the tool is of the ask-user class: a built-in
// one or one declared under tools.answer. Only such a tool's decision
// carries an approver's answer, so an approver client cannot fabricate the
// output of a tool that does real work.
func (p *Policy) AnswersUser(tool string) bool {
	name := lower(tool)
	return slices.Contains(builtinAnswerTools, name) || p.answerTools[name]
}

// builtinPersonTools are the tools, besides the ask-user class, whose
// permission prompt in their own agent is a person's decision, not a
// safety check: Claude Code's ExitPlanMode (and Gemini CLI's
// exit_plan_mode) asks the user to approve the plan, Cline's
// plan_mode_respond hands the turn to the user. Answering such a prompt
// by mode would approve a plan nobody read.
var builtinPersonTools = []string{"exitplanmode", "exit_plan_mode", "plan_mode_respond"}

// AsksPerson reports whether the tool's permission prompt is a person's
// decision (docs/POLICY.md "Tools only a person answers"): the ask-user
// class and builtinPersonTools. No mode answers such a call: it asks, and
// no grant settles it, unless a static rule that names the tool exactly
// allows it (or a rule denies it).
func (p *Policy) AsksPerson(tool string) bool {
	return p.AnswersUser(tool) || slices.Contains(builtinPersonTools, lower(tool))
}

// AnswerTools lists the declared ask-user tools (tools.answer), sorted; the
// built-in ones are not listed.
func (p *Policy) AnswerTools() []string { return slices.Sorted(maps.Keys(p.answerTools)) }

// answerTools reads tools.answer: exact tool names whose output is the
// human's answer. kinds are the tool kinds once the whole tools: mapping is
// read: a tool whose arguments say what it works on (a shell, path or
// search tool) cannot be one, since its output must come from running it.
func (d *decoder) answerTools(n *yaml.Node, where string) error {
	out := map[string]bool{}
	err := d.Strings(n, where, func(it *yaml.Node, loc, s string) error {
		name, err := d.exactToolName(it, loc, s, "answer")
		if err != nil {
			return err
		}
		if out[name] || slices.Contains(builtinAnswerTools, name) {
			return d.Errf(it, loc, "tool %q is listed twice (the built-in ask-user tools are %v; names are case-insensitive)", s, builtinAnswerTools)
		}
		if k := d.p.tools.kindOf(name); k != kindName {
			return d.Errf(it, loc, "tool %q has arguments the policy judges (a shell, path or search tool): its output must come from running it, so it cannot take an approver's answer", s)
		}
		out[name] = true
		return nil
	})
	if err != nil {
		return err
	}
	d.p.answerTools = out
	return nil
}
