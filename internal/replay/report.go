package replay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a replay found.
type Report struct {
	// PolicyVersion is the candidate's version.
	PolicyVersion string `json:"policy_version"`
	// Since is the start of the replayed part of the audit stream.
	Since time.Time `json:"since"`
	// Replayed counts the decision records judged again.
	Replayed int `json:"replayed"`
	// Unchanged counts those the candidate decides alike.
	Unchanged int `json:"unchanged"`
	// Skipped counts, by reason code, the decisions the policy did not
	// make (hard_stop, unavailable): nothing to compare.
	Skipped map[string]int `json:"skipped,omitempty"`
	// Totals counts the changes by kind ("allow→deny").
	Totals map[string]int `json:"totals"`
	// GrantsLost counts the changes of a grant's allow that the grant
	// would no longer give.
	GrantsLost int `json:"grants_lost"`
	// Changes lists every change, oldest decision first.
	Changes []Change `json:"changes"`
}

// add counts one judged record.
func (r *Report) add(v verdict) {
	switch {
	case v.skip != "":
		if r.Skipped == nil {
			r.Skipped = map[string]int{}
		}
		r.Skipped[v.skip]++
		return
	case v.change == nil:
		r.Unchanged++
	default:
		r.Changes = append(r.Changes, *v.change)
		r.Totals[v.change.Key()]++
		if v.change.GrantLost != "" {
			r.GrantsLost++
		}
	}
	r.Replayed++
}

func (r *Report) sort() {
	slices.SortStableFunc(r.Changes, func(a, b Change) int {
		return cmp.Or(a.DecidedAt.Compare(b.DecidedAt), cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.RequestID, b.RequestID))
	})
}

// WriteJSON writes r as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r for a human: one line per change, then the totals.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Changes) > 0 {
		fmt.Fprintln(tw, "DECIDED\tREQUEST\tSESSION\tTOOL\tCHANGE\tWAS\tRULE NOW")
	}
	for i := range r.Changes {
		c := &r.Changes[i]
		was := string(c.ReasonCode)
		if c.GrantLost != "" {
			was += " (grant " + c.GrantLost + " no longer applies)"
		}
		rule := c.Rule
		if rule == "" {
			rule = "(mode) " + c.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.DecidedAt.Format(time.RFC3339), c.RequestID, c.SessionID,
			c.Tool, c.Key(), was, oneLine(rule))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\npolicy %s since %s: %d decisions replayed, %d unchanged, %d would change",
		r.PolicyVersion, r.Since.Format(time.RFC3339), r.Replayed, r.Unchanged, len(r.Changes))
	if r.GrantsLost > 0 {
		fmt.Fprintf(w, " (%d grants would no longer apply)", r.GrantsLost)
	}
	fmt.Fprintln(w)
	for _, k := range slices.Sorted(maps.Keys(r.Totals)) {
		fmt.Fprintf(w, "  %-12s %d\n", k, r.Totals[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.Skipped)) {
		fmt.Fprintf(w, "  skipped %s (not the policy's decision): %d\n", k, r.Skipped[k])
	}
	return nil
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
