package policy

import (
	"strings"

	"github.com/gobwas/glob"
)

// toolKind says where a tool's rule patterns read their value from.
type toolKind uint8

const (
	// kindName tools (MCP, unknown) are matched by name only.
	kindName toolKind = iota
	// kindPath tools are matched by their path argument.
	kindPath
	// kindPattern tools (glob) are matched by their pattern and path
	// arguments.
	kindPattern
	// kindSearch tools (grep) are matched by their path; their pattern is a
	// regular expression, matched only by rules that ask for it with
	// match: {pattern: …}.
	kindSearch
	// kindShell tools are matched by each sub-command of their command.
	kindShell
)

// builtinTiers classifies the tools named in the seed documents (and the
// usual spellings of the common agent frameworks, lower-cased). Tools that
// are not listed are exec, MCP tools (mcp__…) are mcp.
var builtinTiers = map[string]Tier{
	// read: reads data or only touches UI/session metadata.
	"read": TierRead, "read_file": TierRead, "view": TierRead,
	"glob": TierRead, "grep": TierRead, "search": TierRead,
	"list_files": TierRead, "list_directory": TierRead, "ls": TierRead,
	"get_file_info": TierRead, "task_output": TierRead, "bashoutput": TierRead,
	"ask_user": TierRead, "askuserquestion": TierRead,
	"enter_plan_mode": TierRead, "exit_plan_mode": TierRead, "exitplanmode": TierRead,
	"write_plan": TierRead, "load_guide": TierRead,
	"todo_write": TierRead, "todowrite": TierRead,

	// write: mutates files or session state, runs no code.
	"write": TierWrite, "write_file": TierWrite,
	"edit": TierWrite, "edit_file": TierWrite,
	"multi_edit": TierWrite, "multiedit": TierWrite,
	"notebook_edit": TierWrite, "notebookedit": TierWrite,
	"apply_patch": TierWrite,
	"delete":      TierWrite, "delete_file": TierWrite,
	"remove": TierWrite, "remove_file": TierWrite,
	"create_directory": TierWrite, "mkdir": TierWrite,
	"move_file": TierWrite, "rename_file": TierWrite, "copy_file": TierWrite,

	// exec: runs code, spawns agents, talks to the outside world. Listed for
	// documentation: unknown tools are exec anyway.
	"bash": TierExec, "sh": TierExec, "zsh": TierExec, "shell": TierExec,
	"shell_exec": TierExec, "run_shell": TierExec, "run_command": TierExec,
	"execute_command": TierExec, "run": TierExec, "run_in_dir": TierExec,
	"run_background": TierExec, "exec": TierExec,
	"spawn": TierExec, "task": TierExec, "kill_task": TierExec, "killshell": TierExec,
	"send_email": TierExec, "post": TierExec,
}

// builtinShellTools are the tools whose command argument is a shell script.
var builtinShellTools = []string{
	"bash", "sh", "zsh", "shell", "shell_exec", "run_shell", "run_command",
	"execute_command", "run", "run_in_dir", "run_background", "exec",
}

// builtinPathTools are the tools whose path argument is what their rule
// patterns match.
var builtinPathTools = []string{
	"read", "read_file", "view", "write", "write_file", "edit", "edit_file",
	"multi_edit", "multiedit", "notebook_edit", "notebookedit",
	"delete", "delete_file", "remove", "remove_file",
	"list_files", "list_directory", "ls", "get_file_info",
	"create_directory", "mkdir",
}

// builtinPatternTools list files: their pattern and path arguments are
// both matched. builtinSearchTools read files: their path is matched, their
// regular expression only on request.
var (
	builtinPatternTools = []string{"glob"}
	builtinSearchTools  = []string{"grep"}
)

// Argument names each kind of tool is judged by. A tool that carries
// several of them is judged on each (the strictest verdict wins), so that
// an agent cannot hide a path behind the other spelling.
var (
	pathArgs    = []string{"path", "file_path", "notebook_path"}
	patternArgs = []string{"pattern"}
	commandArgs = []string{"command", "cmd", "script"}
)

// mcpPrefixes mark MCP tools: "mcp__server__tool" (Claude Code) and
// "mcp:tool" (seed 004).
var mcpPrefixes = []string{"mcp__", "mcp:"}

// tierGlob is a configured tier declaration whose key is a glob.
type tierGlob struct {
	g    *glob.Pattern
	tier Tier
}

// toolTable is the policy's view of tool names: tiers and kinds.
type toolTable struct {
	// tiers are the configured exact declarations (lower-case names).
	tiers map[string]Tier
	// tierGlobs are the configured glob declarations in file order; the
	// last match wins.
	tierGlobs []tierGlob
	// kinds maps lower-case tool names to their kind; absent means kindName.
	kinds map[string]toolKind
	// writeTools are the exact names of every write-tier path tool known
	// (built-in and declared); a glob-named rule applies to write
	// redirections when it matches one of them.
	writeTools []string
	// readTools likewise for read-tier file tools (path, glob, grep): their
	// rules judge the files shell commands read.
	readTools []string
}

func newToolTable() toolTable {
	t := toolTable{
		tiers: map[string]Tier{},
		kinds: map[string]toolKind{},
	}
	for _, n := range builtinPathTools {
		t.kinds[n] = kindPath
	}
	for _, n := range builtinPatternTools {
		t.kinds[n] = kindPattern
	}
	for _, n := range builtinSearchTools {
		t.kinds[n] = kindSearch
	}
	for _, n := range builtinShellTools {
		t.kinds[n] = kindShell
	}
	return t
}

// tierOf classifies a lower-case tool name: configured exact names, then
// configured globs (last match wins), then the built-in lists, then the MCP
// prefixes; everything else is exec.
func (t *toolTable) tierOf(name string) Tier {
	if tier, ok := t.tiers[name]; ok {
		return tier
	}
	for i := len(t.tierGlobs) - 1; i >= 0; i-- {
		if t.tierGlobs[i].g.Match(name) {
			return t.tierGlobs[i].tier
		}
	}
	if tier, ok := builtinTiers[name]; ok {
		return tier
	}
	for _, p := range mcpPrefixes {
		if strings.HasPrefix(name, p) {
			return TierMCP
		}
	}
	return TierExec
}

func (t *toolTable) kindOf(name string) toolKind {
	return t.kinds[name] // the zero value is kindName
}

// finishWriteTools records every exact path-tool name whose tier is write,
// once the configured declarations are in.
func (t *toolTable) finishWriteTools() {
	seen := map[string]bool{}
	add := func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		k := t.kindOf(n)
		switch tier := t.tierOf(n); {
		case tier == TierWrite && k == kindPath:
			t.writeTools = append(t.writeTools, n)
		case tier == TierRead && (k == kindPath || k == kindPattern || k == kindSearch):
			t.readTools = append(t.readTools, n)
		}
	}
	for n := range builtinTiers {
		add(n)
	}
	for n := range t.tiers {
		add(n)
	}
	for n := range t.kinds {
		add(n)
	}
}

// lower returns s in lower case; tool names and agent types compare
// case-insensitively. strings.ToLower returns s itself when nothing changes.
func lower(s string) string { return strings.ToLower(s) }
