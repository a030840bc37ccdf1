package card

import "github.com/signoff-dev/signoff/pkg/messages"

// clean is a copy of q with every text a card shows sanitised by z, except
// the arguments (of the call and of the batch), which are sanitised after
// they are decoded (see [Present]). q is not changed.
func clean(q messages.ApprovalNeeded, z *sanitizer) messages.ApprovalNeeded {
	one := func(s *string) { *s = z.text(*s, false) }
	r := &q.Request
	for _, s := range []string{r.Cwd, r.AgentID, r.SessionID, r.RequestedBy} {
		z.namePunctuation(s)
	}
	for _, s := range []*string{&r.RequestID, &r.SessionID, &r.AgentID, &r.AgentType, &r.RequestedBy, &r.Tool,
		&r.Description, &r.Cwd, &q.Team, &q.Risk.Tier, &q.Risk.Rule, &q.Risk.Reason, &q.Risk.SafetyOverride} {
		one(s)
	}
	q.ApprovalsSoFar = cleanStrings(q.ApprovalsSoFar, z)
	subs := make([]messages.Verdict, len(q.Risk.Subcommands))
	for i, s := range q.Risk.Subcommands {
		for _, p := range []*string{&s.Command, &s.Kind, &s.Action, &s.Rule, &s.Reason} {
			one(p)
		}
		s.Words = cleanStrings(s.Words, z)
		subs[i] = s
	}
	q.Risk.Subcommands = subs
	q.BatchRemaining = cleanBatch(q.BatchRemaining, z)
	r.BatchRemaining = cleanBatch(r.BatchRemaining, z)
	offers := make([]messages.GrantOffer, len(q.Offers))
	for i, o := range q.Offers {
		for _, p := range []*string{&o.Tool, &o.WhyNot, &o.Note} {
			one(p)
		}
		o.Patterns = cleanStrings(o.Patterns, z)
		offers[i] = o
	}
	q.Offers = offers
	if q.Always != nil {
		a := *q.Always
		one(&a.Tool)
		a.Patterns = cleanStrings(a.Patterns, z)
		q.Always = &a
	}
	if q.AskUser != nil {
		ask := messages.AskUser{Questions: make([]messages.AskQuestion, len(q.AskUser.Questions))}
		for i, aq := range q.AskUser.Questions {
			aq.Question, aq.Header = z.text(aq.Question, true), z.text(aq.Header, false)
			opts := make([]messages.AskOption, len(aq.Options))
			for j, o := range aq.Options {
				opts[j] = messages.AskOption{Label: z.text(o.Label, false), Description: z.text(o.Description, true)}
			}
			aq.Options = opts
			ask.Questions[i] = aq
		}
		q.AskUser = &ask
	}
	return q
}

func cleanStrings(in []string, z *sanitizer) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = z.text(s, false)
	}
	return out
}

// cleanBatch sanitises the tools of a batch; their arguments are sanitised
// when they are rendered.
func cleanBatch(in []messages.BatchItem, z *sanitizer) []messages.BatchItem {
	if in == nil {
		return nil
	}
	out := make([]messages.BatchItem, len(in))
	for i, b := range in {
		out[i] = messages.BatchItem{Tool: z.text(b.Tool, false), Arguments: b.Arguments}
	}
	return out
}
