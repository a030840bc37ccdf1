// Package replay provides the fleet operator's policy experiments: replay
// of the recorded decisions of the audit stream under a candidate policy
// ([Replay]), a shadow policy judged beside the live one on every replica
// ([Shadow], [JudgeShadow]), and the entry points of `signoff admin` that
// drive them.
//
// Replay reads the SIGNOFF_AUDIT stream over NATS, judges every recorded
// request again with the candidate policy (pkg/policy) under the mode
// override it was recorded with, decides nothing and stores nothing, and
// reports each decision that would change — request id, tool, old and new
// action, the rule that decides now — with totals per change, grants that
// would no longer apply included.
//
// Each entry point has the shape func(ctx, [Env], args) int: Env carries
// the NATS connection, the subject prefix and the output streams; the int
// is the process exit code (see [ExitOK] and the others).
package replay
