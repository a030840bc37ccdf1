package shell

// Variables the shells give meaning to (issue 24, item 3; shell_zsh.go).
// Two questions are asked of a variable name: does assigning it change
// what later commands run or how they read words (then the assignment is
// unanalysable: shExecVar), and may the shell set it behind the script's
// back (then its value is not what the script's text says: a read of it
// can be any path, and a for loop over it does not fix its value). zsh's
// lists are checked against the real zsh (TestZshSpecialParameters): each
// of its special parameters is in zshExecParams or zshInertSpecials.

// zshExecParams are zsh's parameters whose assignment changes what runs,
// how words are read, or where paths lead: its tables of functions,
// commands, aliases, options and named directories (functions[cat]=…,
// options+=(extendedglob on)), the arrays tied to PATH and the other
// search paths, the hooks it runs (chpwd_functions…), the programs it
// runs for a redirection alone, the user it runs as, the positional
// parameters (argv), the start-up files of a zsh it starts.
var zshExecParams = map[string]bool{
	"aliases": true, "galiases": true, "saliases": true, "dis_aliases": true, "dis_galiases": true, "dis_saliases": true,
	"builtins": true, "dis_builtins": true, "reswords": true, "dis_reswords": true, "patchars": true, "dis_patchars": true,
	"commands": true, "functions": true, "functions_source": true, "dis_functions": true, "dis_functions_source": true,
	"options": true, "nameddirs": true, "userdirs": true, "usergroups": true, "dirstack": true, "modules": true,
	"mapfile": true, "sysparams": true, "parameters": true, "widgets": true, "keymaps": true, "history": true,
	"historywords": true, "termcap": true, "terminfo": true, "langinfo": true, "errnos": true, "jobdirs": true,
	"jobstates": true, "jobtexts": true, "argv": true, "ARGC": true,
	"path": true, "cdpath": true, "fpath": true, "FPATH": true, "module_path": true, "MODULE_PATH": true,
	"manpath": true, "MANPATH": true, "NULLCMD": true, "READNULLCMD": true, "UID": true, "EUID": true, "GID": true,
	"EGID": true, "USERNAME": true, "ZDOTDIR": true, "STTY": true, "TMPPREFIX": true, "histchars": true, "HISTCHARS": true,
	"PROMPT": true, "PROMPT2": true, "PROMPT3": true, "PROMPT4": true, "SPROMPT": true, "prompt": true,
	"precmd_functions": true, "preexec_functions": true, "chpwd_functions": true, "periodic_functions": true,
	"zshaddhistory_functions": true, "zshexit_functions": true, "PERIOD": true, "FUNCNEST": true,
}

// zshInertSpecials are zsh's other special parameters: assigning them
// changes nothing the policy judges (a terminal size, a counter, the
// shell's own read-only state), but the shell sets them itself.
var zshInertSpecials = map[string]bool{
	"!": true, "#": true, "$": true, "*": true, "0": true, "?": true, "@": true, "_": true, "-": true,
	"COLUMNS": true, "LINES": true, "EPOCHREALTIME": true, "EPOCHSECONDS": true, "epochtime": true,
	"HISTCMD": true, "HISTSIZE": true, "SAVEHIST": true, "KEYBOARD_HACK": true, "LANG": true, "LINENO": true,
	"OPTARG": true, "OPTIND": true, "PPID": true, "RANDOM": true, "SECONDS": true, "SHLVL": true, "TERM": true,
	"TRY_BLOCK_ERROR": true, "TRY_BLOCK_INTERRUPT": true, "TTYIDLE": true, "WORDCHARS": true,
	"ZSH_EVAL_CONTEXT": true, "zsh_eval_context": true, "ZSH_SUBSHELL": true, "funcfiletrace": true,
	"funcsourcetrace": true, "funcstack": true, "functrace": true, "pipestatus": true, "status": true,
	"psvar": true, "PSVAR": true, "mailpath": true, "MAILPATH": true, "fignore": true, "FIGNORE": true,
	// Special in zsh and handled as bash's: shExecVars.
	"CDPATH": true, "HOME": true, "IFS": true, "PATH": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true,
}

// shImplicitVars are variables a shell sets by itself, beyond its special
// parameters: [[ =~ ]] (BASH_REMATCH; zsh MATCH, match, MBEGIN…), read
// and select (REPLY, reply), getopts, mapfile, and bash's own state.
var shImplicitVars = map[string]bool{
	"BASH_REMATCH": true, "MATCH": true, "MBEGIN": true, "MEND": true, "match": true, "mbegin": true, "mend": true,
	"REPLY": true, "reply": true, "MAPFILE": true, "COMPREPLY": true, "READLINE_LINE": true, "READLINE_POINT": true,
	"BASH_COMMAND": true, "BASH_SOURCE": true, "BASH_LINENO": true, "BASH_ARGV": true, "BASH_ARGC": true,
	"FUNCNAME": true, "PIPESTATUS": true, "DIRSTACK": true, "PWD": true, "OLDPWD": true, "BASHPID": true,
	"SRANDOM": true, "GROUPS": true, "HOSTNAME": true, "HOSTTYPE": true, "MACHTYPE": true, "OSTYPE": true,
	"BASH_SUBSHELL": true, "BASH_EXECUTION_STRING": true, "COPROC": true,
}

// zshLinked are zsh's parameters that change when another does (the
// scalar and array of a tied pair: manpath=x changes $MANPATH) or that the
// shell keeps up to date ($_, $OPTARG, its stacks).
var zshLinked = map[string]bool{
	"psvar": true, "PSVAR": true, "mailpath": true, "MAILPATH": true, "fignore": true, "FIGNORE": true,
	"manpath": true, "MANPATH": true, "cdpath": true, "CDPATH": true, "fpath": true, "FPATH": true,
	"module_path": true, "MODULE_PATH": true, "path": true, "histchars": true, "HISTCHARS": true,
	"_": true, "OPTARG": true, "status": true, "pipestatus": true, "funcstack": true, "funcfiletrace": true,
	"funcsourcetrace": true, "functrace": true, "zsh_eval_context": true, "ZSH_EVAL_CONTEXT": true,
	// Tied by the zsh/watch module, loaded on first use (zsh -f lists
	// neither until then).
	"watch": true, "WATCH": true,
}

// zshNumeric are the parameters of zshExecParams whose value is a number.
var zshNumeric = map[string]bool{"UID": true, "EUID": true, "GID": true, "EGID": true, "ARGC": true, "FUNCNEST": true, "PERIOD": true}

// shShellSets reports whether a shell may give name a value the script's
// text does not show (a read of it can be any path, and a for loop over it
// does not fix its value). A value the user's environment gives ($HOME,
// $PATH, $LANG) or a number the shell keeps ($UID, $RANDOM) is not one.
func shShellSets(name string) bool {
	return shImplicitVars[name] || zshLinked[name] || zshExecParams[name] && !zshNumeric[name]
}
