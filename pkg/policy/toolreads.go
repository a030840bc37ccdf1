package policy

import (
	"encoding/json"
	"slices"
	"strconv"
)

// What a write-tier file tool reads (docs/POLICY.md "What a write-tier
// tool reads"). A write-tier tool is judged by the write rules; most of
// them also read what they name — Edit and MultiEdit answer with a cat -n
// snippet of the edited file, str_replace_editor's view returns the file,
// copy_file and move_file put the source's content where the agent can
// read it, apply_patch's *** Update File reads the file it patches — so
// each path such a tool reads is judged as a read too (subjRead: the read
// rules' deny and ask meet it, as they meet the files shell commands
// read). Only what is known to be written without being read is a write
// alone: the closed side.

// writeOnlyTools create, overwrite or delete what their path arguments
// name without reading it, and answer with no content of it.
var writeOnlyTools = map[string]bool{
	"write": true, "write_file": true, "write_to_file": true,
	"create_directory": true, "mkdir": true,
	"delete": true, "delete_file": true, "remove": true, "remove_file": true,
}

// Path arguments (pathArgs spellings) that name the two ends of a copy,
// move or rename: a source is read whole, as a tree (a copied directory
// carries everything under it), in every write-tier tool; a destination
// is only written.
var (
	sourceArgs = []string{"source", "src", "from", "sourcepath", "oldpath", "target"}
	destArgs   = []string{"destination", "dst", "dest", "destinationpath", "newpath", "to"}
)

// access is what a sub-command does with the paths of its call.
type access uint8

const (
	// accessReadWrite: reads and writes (the closed side's default).
	accessReadWrite access = iota
	// accessRead: reads only; the call is a read-tier call.
	accessRead
	// accessWrite: writes without reading.
	accessWrite
)

// editorCommands are the commands of Anthropic's text editor tool
// (str_replace_editor, str_replace_based_edit_tool): view returns a file's
// lines or a directory's listing, create writes a file whole, the others
// read the file and answer with a snippet of it.
var editorCommands = map[string]access{
	"view": accessRead, "create": accessWrite,
	"str_replace": accessReadWrite, "insert": accessReadWrite, "undo_edit": accessReadWrite,
}

// subCommandArgs is the argument that names a path tool's sub-command.
var subCommandArgs = []string{"command"}

// subCommandTools are the path tools whose command argument names what
// the call does, by lower-case tool name.
var subCommandTools = map[string]map[string]access{
	"str_replace_editor":          editorCommands,
	"str_replace_based_edit_tool": editorCommands,
}

// pathAccess sets what the call of a path tool does with its paths: known
// write-only tools write, a sub-command (str_replace_editor's command) may
// make the call a read-tier one or a write-only one. A path tool with a
// command argument whose value is not a sub-command the policy knows for
// it gets a floor subject (ok): what the call does is not known.
func (e *evaluation) pathAccess(args json.RawMessage) (floor subject, ok bool) {
	e.writeOnly = writeOnlyTools[e.tool]
	if e.kind != kindPath {
		return subject{}, false
	}
	var buf [2]argValue
	vals, err := scanArgs(buf[:0], args, subCommandArgs)
	table := subCommandTools[e.tool]
	if err != nil || len(vals) == 0 && table == nil {
		return subject{}, false // unreadable arguments get their floor in paths
	}
	floor = subject{kind: subjName, tier: e.tier, floorLayer: "input", ungrantable: true}
	if len(vals) != 1 {
		floor.floor = e.name + " takes one command argument (view, create, str_replace…), got " + strconv.Itoa(len(vals)) + ": what the call does is not known"
		return floor, true
	}
	cmd, _ := argString(vals[0].raw)
	a, known := table[cmd]
	if !known {
		floor.floor = "command " + strconv.Quote(cmd) + " of " + e.name + " is not one the policy knows: what the call does with its path is not known"
		return floor, true
	}
	switch a {
	case accessRead:
		// A read: judged as a read-tier call (the tool's own rules and the
		// read rules), which the mode allows as it allows Read.
		e.tier, e.sub, e.writeOnly = TierRead, cmd, false
	case accessWrite:
		e.writeOnly = true
	}
	return subject{}, false
}

// readsArg reports whether a call that is not read-tier reads the path
// under the (normalized) argument key as well as writing it (or, for an
// exec- or mcp-tier path tool declared under tools.paths, whatever else
// it does with it: an upload reads its file).
func (e *evaluation) readsArg(key string) bool {
	switch {
	case e.tier == TierRead:
		return false // a read-tier call's paths are reads already
	case slices.Contains(sourceArgs, key):
		return true
	case slices.Contains(destArgs, key):
		return false
	}
	return !e.writeOnly
}

// readTwin returns the read of a path s that a write-tier tool reads as
// well as writes: judged by the read rules, as a shell command's read is.
// Floors stay with the write.
func readTwin(s *subject, tree bool) subject {
	r := *s
	r.kind, r.tier = subjRead, TierRead
	r.floor, r.floorLayer, r.ungrantable = "", "", false
	r.recursive = s.recursive || tree
	return r
}
