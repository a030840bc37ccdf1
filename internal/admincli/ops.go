package admincli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// start parses args and connects; a non-negative code means stop with it.
func (e *env) start(ctx context.Context, args []string, check func() bool) int {
	if !e.parse(args) || (check != nil && !check()) {
		return ExitUsage
	}
	if !e.connect(ctx) {
		return ExitNoBroker
	}
	return -1
}

// call is the shape of most subcommands: parse args, check them (check
// may be nil) and connect, then send the one admin request op that req
// builds and print its reply with show. It returns the exit status.
func (e *env) call(ctx context.Context, args []string, check func() bool, op string, req func() messages.AdminRequest, show func(messages.AdminReply) int) int {
	if code := e.start(ctx, args, check); code >= 0 {
		return code
	}
	defer e.close()
	return e.send(ctx, op, req(), show)
}

// send sends one admin request and prints its reply with show, or the
// failure; it returns the exit status.
func (e *env) send(ctx context.Context, op string, req messages.AdminRequest, show func(messages.AdminReply) int) int {
	rep, oe := e.request(ctx, op, req)
	if oe != nil {
		return e.fail(oe)
	}
	return show(rep)
}

// noRequest builds the empty request of the operations that take nothing.
func noRequest() messages.AdminRequest { return messages.AdminRequest{} }

// emitMessage prints a reply's message (the whole reply with --json).
func (e *env) emitMessage(rep messages.AdminReply) int {
	return e.emit(rep, func(w io.Writer) { fmt.Fprintln(w, rep.Message) })
}

// bindListing registers the filters of a listing, --team (repeatable),
// --session and --agent, with their help texts. It returns the request
// they fill and its builder (for call), which adds the teams.
func (e *env) bindListing(team, session, agent string) (*messages.AdminRequest, func() messages.AdminRequest) {
	var teams multiFlag
	req := &messages.AdminRequest{}
	e.fs.Var(&teams, "team", team)
	e.fs.StringVar(&req.SessionID, "session", "", session)
	e.fs.StringVar(&req.AgentID, "agent", "", agent)
	return req, func() messages.AdminRequest {
		req.Teams = teams
		return *req
	}
}

func runPending(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("pending", "[flags]", "Lists the open questions, oldest first per team.", out, errw)
	req, build := e.bindListing("only questions routed to this `team` (repeatable; default every team of the policy)",
		"only this session's questions", "only this agent id's questions")
	e.fs.StringVar(&req.AgentType, "agent-type", "", "only questions of this agent type")
	return e.call(ctx, args, e.noArgs, messages.AdminOpListPending, build, func(rep messages.AdminReply) int {
		return emitTable(e, rep.Pending, []string{"REQUEST_ID", "SESSION", "AGENT", "TOOL", "TEAM", "APPROVALS", "EXPIRES"},
			func(q messages.ApprovalNeeded) []string {
				return []string{q.Request.RequestID, q.Request.SessionID, q.Request.AgentID, q.Request.Tool, q.Team,
					fmt.Sprintf("%d/%d", len(q.ApprovalsSoFar), q.ApprovalsRequired), when(q.ExpiresAt)}
			})
	})
}

func runGrants(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("grants", "[flags]", "Lists the standing grants (session and always).", out, errw)
	_, build := e.bindListing("only grants approved for this `team` (repeatable)",
		"the grants of this session", "the always grants of this agent id")
	return e.call(ctx, args, e.noArgs, messages.AdminOpListGrants, build, func(rep messages.AdminReply) int {
		return emitTable(e, rep.Grants, []string{"GRANT_ID", "SCOPE", "OWNER", "TOOL", "PATTERNS", "TEAMS", "EXPIRES"},
			func(g messages.Grant) []string {
				owner := g.SessionID
				if g.Scope != messages.ScopeSession {
					owner = g.AgentID
				}
				return []string{g.ID, string(g.Scope), owner, g.Tool, strings.Join(g.Patterns, " | "), strings.Join(g.Teams, ","), when(g.ExpiresAt)}
			})
	})
}

func runRevoke(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("revoke", "GRANT_ID… | --all --session ID | --all --agent ID",
		"Revokes grants by id, or every grant of a session and/or an agent (--all).", out, errw)
	var all bool
	var req messages.AdminRequest
	e.fs.BoolVar(&all, "all", false, "revoke every grant of --session and/or --agent")
	e.fs.StringVar(&req.SessionID, "session", "", "with --all: the session whose grants go")
	e.fs.StringVar(&req.AgentID, "agent", "", "with --all: the agent whose always grants go")
	check := func() bool {
		switch {
		case all && e.fs.NArg() > 0:
			return e.usageErr("give grant ids or --all, not both")
		case all && req.SessionID == "" && req.AgentID == "":
			return e.usageErr("--all needs --session, --agent or both (a selector; there is no revoke of every grant)")
		case !all && (req.SessionID != "" || req.AgentID != ""):
			return e.usageErr("--session and --agent select with --all only; to revoke one grant give its id")
		case !all && e.fs.NArg() == 0:
			return e.usageErr("give the ids of the grants to revoke (see `signoff admin grants`), or --all with a selector")
		}
		return true
	}
	if code := e.start(ctx, args, check); code >= 0 {
		return code
	}
	defer e.close()
	if all {
		return e.send(ctx, messages.AdminOpRevokeGrants, req, e.emitMessage)
	}
	type result struct {
		GrantID string          `json:"grant_id"`
		Revoked *messages.Grant `json:"revoked,omitempty"`
		Error   string          `json:"error,omitempty"`
	}
	var results []result
	code := ExitOK
	for _, id := range e.fs.Args() {
		rep, oe := e.request(ctx, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: id})
		if oe != nil {
			results = append(results, result{GrantID: id, Error: oe.msg})
			fmt.Fprintf(e.errw, "signoff admin revoke: %s: %s\n", id, oe.msg)
			code = max(code, oe.exit) // failed (1) < not found (3) < no broker (4)
			continue
		}
		results = append(results, result{GrantID: id, Revoked: rep.Grant})
	}
	e.emit(results, func(w io.Writer) {
		for _, r := range results {
			if r.Error != "" {
				fmt.Fprintf(w, "%s\tnot revoked: %s\n", r.GrantID, r.Error)
			} else {
				fmt.Fprintf(w, "%s\trevoked\n", r.GrantID)
			}
		}
	})
	return code
}

// bindSelector registers the selector flags of stop and resume.
func (e *env) bindSelector(sel *messages.Selector) {
	e.fs.StringVar(&sel.Agent, "agent", "", "agents whose id matches this `glob` (*, ?, [...])")
	e.fs.StringVar(&sel.Session, "session", "", "the agents of this session")
	e.fs.StringVar(&sel.AgentType, "agent-type", "", "agents of this agent type")
	e.fs.BoolVar(&sel.All, "all", false, "every agent")
}

func (e *env) checkSelector(sel *messages.Selector) func() bool {
	return func() bool {
		if !e.noArgs() {
			return false
		}
		if err := sel.Validate(); err != nil {
			return e.usageErr("selector: %v (use --agent GLOB, --session ID, --agent-type T — together they all must match — or --all)", err)
		}
		return true
	}
}

// selected builds the request of stop and resume: req with the selector
// sel and who acts (--by, else $USER).
func selected(req *messages.AdminRequest, sel *messages.Selector) func() messages.AdminRequest {
	return func() messages.AdminRequest {
		req.Selector, req.By = sel, operator(req.By)
		return *req
	}
}

func runStop(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("stop", "--agent GLOB | --session ID | --agent-type T | --all [--reason TEXT]",
		"Stops the selected agents on every replica within a second, for the sessions they open later\n"+
			"too, until `signoff admin resume` with the same selector: their calls are denied hard_stop\n"+
			"with a reason that names the stop, and their pending requests are denied now.", out, errw)
	var sel messages.Selector
	var req messages.AdminRequest
	e.bindSelector(&sel)
	e.fs.StringVar(&req.Reason, "reason", "", "why: shown in every denial the stop makes")
	e.fs.StringVar(&req.By, "by", "", "who stops (default $USER)")
	return e.call(ctx, args, e.checkSelector(&sel), messages.AdminOpStop, selected(&req, &sel), func(rep messages.AdminReply) int {
		return e.emit(rep, func(w io.Writer) {
			fmt.Fprintln(w, rep.Message)
			for _, id := range rep.Denied {
				fmt.Fprintf(w, "  denied\t%s\n", id)
			}
		})
	})
}

func runResume(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("resume", "--agent GLOB | --session ID | --agent-type T | --all",
		"Lifts the fleet stop whose selector is exactly this one (see `signoff admin stops`).", out, errw)
	var sel messages.Selector
	var req messages.AdminRequest
	e.bindSelector(&sel)
	e.fs.StringVar(&req.By, "by", "", "who resumes (default $USER)")
	return e.call(ctx, args, e.checkSelector(&sel), messages.AdminOpResume, selected(&req, &sel), e.emitMessage)
}

func runStops(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("stops", "", "Lists the fleet stops in force.", out, errw)
	return e.call(ctx, args, e.noArgs, messages.AdminOpListStops, noRequest, func(rep messages.AdminReply) int {
		return emitTable(e, rep.Stops, []string{"SELECTOR", "BY", "SINCE", "REASON"}, func(s messages.FleetStop) []string {
			return []string{s.ID, s.By, when(s.CreatedAt), s.Reason}
		})
	})
}

func runMode(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("mode", "(--session ID | --agent-type T) (MODE | --clear)",
		"Sets the policy mode (always-ask, auto-edit, yolo) of a session or an agent type, or clears it.", out, errw)
	var req messages.AdminRequest
	var clear bool
	e.fs.StringVar(&req.SessionID, "session", "", "the session whose mode to set")
	e.fs.StringVar(&req.AgentType, "agent-type", "", "the agent type whose mode to set")
	e.fs.BoolVar(&clear, "clear", false, "clear the override: the policy's mode applies again")
	check := func() bool {
		switch {
		case (req.SessionID == "") == (req.AgentType == ""):
			return e.usageErr("give exactly one of --session and --agent-type")
		case clear && e.fs.NArg() > 0:
			return e.usageErr("give a mode or --clear, not both")
		case !clear && e.fs.NArg() != 1:
			return e.usageErr("give one mode (always-ask, auto-edit, yolo) or --clear")
		}
		if !clear {
			req.Mode = e.fs.Arg(0)
		}
		if err := req.ValidateOp(messages.AdminOpSetMode); err != nil {
			return e.usageErr("%v", err)
		}
		return true
	}
	return e.call(ctx, args, check, messages.AdminOpSetMode, func() messages.AdminRequest { return req }, e.emitMessage)
}

func runPolicy(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("policy", "[reload]",
		"Asks every replica for the policy version in force; with reload, every replica reloads its\n"+
			"policy file first (a bad file is refused there and the last good policy stays).", out, errw)
	wait := time.Second
	e.fs.DurationVar(&wait, "wait", wait, "how long to gather replicas' answers")
	reload := false
	check := func() bool {
		switch {
		case e.fs.NArg() == 1 && e.fs.Arg(0) == "reload":
			reload = true
		case e.fs.NArg() > 0:
			return e.usageErr("unexpected argument %q (want nothing or reload)", e.fs.Arg(0))
		}
		return wait > 0 || e.usageErr("--wait must be positive")
	}
	if code := e.start(ctx, args, check); code >= 0 {
		return code
	}
	defer e.close()
	op := messages.AdminOpPolicyVersion
	if reload {
		op = messages.AdminOpReloadPolicy
	}
	replies, failed, oe := e.scatter(ctx, op, wait)
	if oe != nil {
		return e.fail(oe)
	}
	type answer struct {
		Replica       string `json:"replica,omitempty"`
		PolicyVersion string `json:"policy_version,omitempty"`
		Message       string `json:"message,omitempty"`
		Error         string `json:"error,omitempty"`
	}
	var answers []answer
	versions := map[string]bool{}
	for _, r := range replies {
		a := answer{Message: r.Message}
		if r.Policy != nil {
			a.Replica, a.PolicyVersion = r.Policy.Replica, r.Policy.PolicyVersion
			versions[a.PolicyVersion] = true
		}
		answers = append(answers, a)
	}
	for _, f := range failed {
		answers = append(answers, answer{Error: f.msg})
	}
	e.emit(answers, func(w io.Writer) {
		if !reload {
			row(w, "REPLICA", "POLICY_VERSION")
		}
		for _, a := range answers {
			switch {
			case a.Error != "":
				fmt.Fprintf(w, "error\t%s\n", a.Error)
			case reload:
				fmt.Fprintln(w, a.Message)
			default:
				row(w, a.Replica, a.PolicyVersion)
			}
		}
		if len(versions) > 1 {
			fmt.Fprintf(w, "the %d replicas that answered run %d different policies\n", len(replies), len(versions))
		}
	})
	if len(failed) > 0 {
		return ExitFailed
	}
	return ExitOK
}

func runAgents(ctx context.Context, args []string, out, errw io.Writer) int {
	e := newEnv("agents", "[--silent]",
		"Lists every agent identity that asked: its last request, the gate that sent it (claude-code-hook,\n"+
			"codex-hook, mcp-gateway, sdk) and its version. SILENT marks an agent that was steadily active\n"+
			"and stopped asking (a gate removed or failing open?).", out, errw)
	onlySilent := false
	e.fs.BoolVar(&onlySilent, "silent", false, "list only the agents gone silent")
	return e.call(ctx, args, e.noArgs, messages.AdminOpListAgents, noRequest, func(rep messages.AdminReply) int {
		agents := rep.Agents
		if onlySilent {
			agents = agents[:0]
			for _, a := range rep.Agents {
				if a.Silent {
					agents = append(agents, a)
				}
			}
		}
		return emitTable(e, agents, []string{"AGENT", "TYPE", "GATE", "VERSION", "LAST_SEEN", "REQUESTS", "LAST_TOOL", "SESSION", "SILENT"},
			func(a messages.AgentSeen) []string {
				s := ""
				if a.Silent {
					s = "SILENT"
				}
				return []string{a.AgentID, a.AgentType, a.Gate, a.GateVersion, when(a.LastSeen), strconv.FormatInt(a.Requests, 10), a.Tool, a.SessionID, s}
			})
	})
}

// noArgs refuses positional arguments.
func (e *env) noArgs() bool {
	if e.fs.NArg() > 0 {
		return e.usageErr("unexpected argument %q", e.fs.Arg(0))
	}
	return true
}

// emitTable prints items as JSON (--json; none as []), or a table: the
// header, then a row of cells per item.
func emitTable[T any](e *env, items []T, header []string, cells func(T) []string) int {
	return e.emit(orEmpty(items), func(w io.Writer) {
		row(w, header...)
		for _, it := range items {
			row(w, cells(it)...)
		}
	})
}

// orEmpty makes a nil list print as [] in JSON.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
