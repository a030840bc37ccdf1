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
	// kindPatch tools (apply_patch) are judged by every path their patch
	// touches: Codex's *** Begin Patch envelope or a unified diff.
	kindPatch
)

// builtinTiers classifies the tools named in the seed documents and the
// tools of the agents people run (lower-cased): Claude Code (Read, Write,
// Edit, MultiEdit, NotebookEdit, Glob, Grep, LS, Bash, WebFetch,
// WebSearch, Task/Agent, TodoWrite, AskUserQuestion, ExitPlanMode…),
// Codex (shell, exec_command, apply_patch, update_plan, view_image),
// Gemini CLI (read_file, read_many_files, list_directory, glob,
// search_file_content, write_file, replace, run_shell_command, web_fetch,
// google_web_search, save_memory), opencode (read, write, edit, list,
// glob, grep, patch, multiedit, bash, webfetch, todowrite, todoread),
// Cursor (read_file, edit_file, search_replace, delete_file, list_dir,
// run_terminal_cmd, codebase_search, grep_search, file_search) and Cline
// (read_file, write_to_file, replace_in_file, search_files, list_files,
// list_code_definition_names, execute_command, browser_action…). Tools
// that are not listed are exec, MCP tools (mcp__…) are mcp.
var builtinTiers = map[string]Tier{
	// read: reads data or only touches UI/session metadata.
	"read": TierRead, "read_file": TierRead, "view": TierRead,
	"glob": TierRead, "grep": TierRead, "search": TierRead,
	"list_files": TierRead, "list_directory": TierRead, "ls": TierRead, "list": TierRead,
	"list_dir": TierRead, "get_file_info": TierRead, "task_output": TierRead, "bashoutput": TierRead,
	"ask_user": TierRead, "askuserquestion": TierRead, "ask_followup_question": TierRead,
	"enter_plan_mode": TierRead, "exit_plan_mode": TierRead, "exitplanmode": TierRead,
	"plan_mode_respond": TierRead, "attempt_completion": TierRead,
	"write_plan": TierRead, "load_guide": TierRead, "update_plan": TierRead,
	"todo_write": TierRead, "todowrite": TierRead, "todoread": TierRead, "write_todos": TierRead,
	"read_many_files": TierRead, "search_file_content": TierRead, "search_files": TierRead,
	"notebookread": TierRead, "notebook_read": TierRead, "view_image": TierRead,
	"list_code_definition_names": TierRead, "grep_search": TierRead, "file_search": TierRead,
	"codebase_search": TierRead,

	// write: mutates files or session state, runs no code.
	"write": TierWrite, "write_file": TierWrite, "write_to_file": TierWrite,
	"edit": TierWrite, "edit_file": TierWrite, "replace": TierWrite, "replace_in_file": TierWrite,
	"search_replace": TierWrite, "str_replace_editor": TierWrite, "str_replace_based_edit_tool": TierWrite,
	"multi_edit": TierWrite, "multiedit": TierWrite,
	"notebook_edit": TierWrite, "notebookedit": TierWrite,
	"apply_patch": TierWrite, "patch": TierWrite,
	"delete": TierWrite, "delete_file": TierWrite,
	"remove": TierWrite, "remove_file": TierWrite,
	"create_directory": TierWrite, "mkdir": TierWrite,
	"move_file": TierWrite, "rename_file": TierWrite, "copy_file": TierWrite,

	// exec: runs code, spawns agents, talks to the outside world. Listed for
	// documentation: unknown tools are exec anyway.
	"bash": TierExec, "sh": TierExec, "zsh": TierExec, "shell": TierExec,
	"shell_exec": TierExec, "run_shell": TierExec, "run_command": TierExec,
	"execute_command": TierExec, "run": TierExec, "run_in_dir": TierExec,
	"run_background": TierExec, "exec": TierExec, "exec_command": TierExec,
	"local_shell": TierExec, "run_shell_command": TierExec, "run_terminal_cmd": TierExec,
	"write_stdin": TierExec,
	"spawn":       TierExec, "task": TierExec, "agent": TierExec, "new_task": TierExec,
	"kill_task": TierExec, "killshell": TierExec,
	"webfetch": TierExec, "web_fetch": TierExec, "websearch": TierExec, "web_search": TierExec,
	"google_web_search": TierExec, "browser_action": TierExec,
	"slashcommand": TierExec, "skill": TierExec,
	"send_email": TierExec, "post": TierExec,
	// Gemini's save_memory appends to ~/.gemini/GEMINI.md, which every
	// later session in every project reads as instructions: a write
	// outside the workspace that names no path, so no write rule meets
	// it.
	"save_memory": TierExec,
}

// builtinShellTools are the tools whose command argument is a shell script.
var builtinShellTools = []string{
	"bash", "sh", "zsh", "shell", "shell_exec", "run_shell", "run_command",
	"execute_command", "run", "run_in_dir", "run_background", "exec",
	"exec_command", "local_shell", "run_shell_command", "run_terminal_cmd",
}

// builtinPathTools are the tools whose path arguments are what their rule
// patterns match.
var builtinPathTools = []string{
	"read", "read_file", "view", "write", "write_file", "write_to_file", "edit", "edit_file",
	"replace", "replace_in_file", "search_replace", "str_replace_editor", "str_replace_based_edit_tool",
	"multi_edit", "multiedit", "notebook_edit", "notebookedit", "notebookread", "notebook_read",
	"delete", "delete_file", "remove", "remove_file",
	"list_files", "list_directory", "ls", "list", "list_dir", "get_file_info",
	"create_directory", "mkdir", "move_file", "rename_file", "copy_file",
	"read_many_files", "view_image", "list_code_definition_names",
}

// builtinPatternTools list files: their pattern and path arguments are
// both matched. builtinSearchTools read files: their path is matched, their
// regular expression only on request.
var (
	builtinPatternTools = []string{"glob"}
	builtinSearchTools  = []string{"grep", "search_file_content", "search_files"}
	builtinPatchTools   = []string{"apply_patch", "patch"}
)

// treeTools delete, move or rename what their path names: a directory goes
// with everything under it, so a rule on dir/** applies to dir itself.
var treeTools = map[string]bool{
	"delete": true, "delete_file": true, "remove": true, "remove_file": true,
	"move_file": true, "rename_file": true,
}

// dirTools read the files under the directory their path names
// (read_many_files their content, list_code_definition_names the
// definitions in them): the whole tree is read. The listing tools (ls,
// LS, list, list_dir, list_directory, list_files) are not among them:
// a listing shows the names in a directory, a read of the directory, not
// of the files in it, as ls DIR in a shell command is (docs/POLICY.md
// "Path patterns", Trees).
var dirTools = map[string]bool{
	"read_many_files": true, "list_code_definition_names": true,
}

// Argument names each kind of tool is judged by, in lower case without
// separators (file_path, filePath and FILE_PATH are all "filepath"). A
// tool that carries several of them is judged on each (the strictest
// verdict wins), so that an agent cannot hide a path behind another
// spelling; an argument may hold one string or a list of them.
var (
	pathArgs = []string{
		"path", "filepath", "notebookpath", "absolutepath", "targetfile", "relativeworkspacepath",
		"paths", "filepaths", "file", "files", "filename", "dirpath", "targetdirectories",
		"source", "destination", "src", "dst", "dest", "sourcepath", "destinationpath",
		"oldpath", "newpath", "from", "to", "target",
	}
	patternArgs = []string{"pattern"}
	// filterArgs are the file filters of search tools (Claude's Grep glob,
	// Gemini's and opencode's include, Cline's file_pattern, Cursor's
	// include_pattern): the files searched, judged as paths, so that
	// Grep {glob: "*.env"} meets the rules on *.env.
	filterArgs  = []string{"glob", "include", "filepattern", "includepattern"}
	commandArgs = []string{"command", "cmd", "script"}
	// patchArgs carry a patch's text; Codex's hooks send apply_patch's in
	// tool_input.command.
	patchArgs = []string{"input", "patch", "patchtext", "command"}
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
	for _, n := range builtinPatchTools {
		t.kinds[n] = kindPatch
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
		case tier == TierWrite && (k == kindPath || k == kindPatch):
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
