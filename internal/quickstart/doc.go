// Package quickstart holds no code: its test runs the README's quickstart
// commands, as extracted from README.md, end to end (the dev broker, the
// demo agent, an approver's answer on the web page, `policy check`), so the
// README breaks the build when it drifts from what the commands do.
package quickstart
