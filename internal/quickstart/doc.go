// Package quickstart holds no code: its tests run the README's quickstart
// commands, as extracted from README.md, end to end (the dev broker, the
// demo agent, an approver's answer on the web page, `policy check`), so the
// README breaks the build when it drifts from what the commands do; runs
// docs/AGENTS.md's two-minute Claude Code section the same way (go install,
// the dev broker, the terminal bot in a pseudo-terminal, the settings.json
// hook command on the calls the section promises outcomes of); and
// check that the dev plane, its example bots and the compose plane never
// take the same port; that every relative link of README.md and docs/
// (file and #anchor) resolves; that every flag they name is a flag of
// broker, approver-bot or signoff; and that every benchmark `make bench`
// and docs/BENCHMARKS.md select exists.
package quickstart
