package policy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Arguments that change how a call runs (messages.ExecutionArguments):
// a host may turn its sandbox off, take permissions beyond it, pick the
// program that runs the command or the environment it runs with, from
// keys beside the command or path the rules judge. A rule that allows
// `bash(ls *)` allows `ls` as the host runs it by default, not `ls` run
// outside the sandbox, so a call of an agent's own tool (shell, file,
// patch) that asks for any of these asks, and no standing grant answers
// it. Keys compare as the policy's argument keys do (any case, '_' or
// '-' separators), so no spelling a host might read slips by.

// execArgNames are the keys of ExecutionArguments the policy judges here,
// normalized as scanArgs takes them. The working directories (every
// spelling of workdirArgs) are judged where the call runs
// (evaluation.workdir); run_in_background changes nothing of what runs.
var execArgNames = func() []string {
	var out []string
	for k := range messages.ExecutionArguments {
		n := messages.NormalizeKey(k)
		if n == "runinbackground" || slices.Contains(workdirArgs, n) {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}()

// execArgReasons returns why the arguments ask the host to run the call
// otherwise than by default, or nil.
func execArgReasons(args json.RawMessage) []string {
	var buf [4]argValue
	vals, err := scanArgs(buf[:0], args, execArgNames)
	if err != nil {
		return nil // the call's own scan reports the malformed arguments
	}
	var out []string
	for _, v := range vals {
		if execArgDefault(v.key, v.raw) {
			continue
		}
		what, _ := messages.ExecutionArgument(v.key)
		out = append(out, "argument "+v.key+"="+string(bytes.TrimSpace(v.raw))+" "+what)
	}
	return out
}

// execArgDefault reports whether raw is the value that leaves the host's
// default in force: false, null, an empty string or object, or
// sandbox_permissions' use_default.
func execArgDefault(key string, raw []byte) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "false", "null", `""`, "{}", "[]":
		return true
	}
	if key == "sandboxpermissions" {
		s, ok := argString(raw)
		return ok && s == "use_default"
	}
	return false
}

// applyExecArgs makes d ask, with no grant answering it, when the call
// asks its host to run it otherwise than by default (see above); a deny
// stands, and yolo mode asks nothing, as for safety overrides.
func (e *evaluation) applyExecArgs(d *Decision, args json.RawMessage) {
	if d.Action == Deny || e.mode == ModeYolo {
		return
	}
	reasons := execArgReasons(args)
	if len(reasons) == 0 {
		return
	}
	if d.Action == Allow {
		d.Rule, d.Route, d.ApprovalsRequired, d.TTL, d.Escalation = "", "", 0, 0, nil
	}
	d.Action = Ask
	d.Layer = "input"
	d.Reason = "the call asks its host to run it otherwise than by default (" + strings.Join(reasons, "; ") + "); " + d.Reason
	d.Grantable = false
}
