package replay

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// skipUnreadable is the Skipped key of a record that does not decode;
// skipClipped of one stored without its arguments (too large for a stream
// message even clipped: messages.AuditRecord.Clip).
const (
	skipUnreadable = "unreadable"
	skipClipped    = "clipped"
)

// judged is a worker's answer about one record.
type judged struct {
	key string // the record's decision, as its Nats-Msg-Id names it ("" = not a decision)
	v   verdict
}

// Records judges every audit record read yields under cand, concurrently,
// and reports what would change. A decision recorded twice (a replica's
// retry past the stream's duplicate window) counts once. since is only
// stated in the report.
func Records(ctx context.Context, cand *policy.Policy, since time.Time, read func(yield func([]byte)) error) (Report, error) {
	rep := Report{PolicyVersion: cand.Version(), Since: since.UTC(), Totals: map[string]int{}}
	in := make(chan []byte, readBatch)
	out := make(chan judged, readBatch)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for data := range in {
				for _, j := range judgeData(cand, data) {
					out <- j
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := map[string]struct{}{}
		for j := range out {
			if j.key == "" && j.v.skip == "" {
				continue
			}
			if j.key != "" {
				if _, dup := seen[j.key]; dup {
					continue
				}
				seen[j.key] = struct{}{}
			}
			rep.add(j.v)
		}
	}()
	err := read(func(data []byte) {
		select {
		case in <- data:
		case <-ctx.Done():
		}
	})
	close(in)
	workers.Wait()
	close(out)
	<-done
	if err == nil {
		err = ctx.Err()
	}
	rep.sort()
	return rep, err
}

// judgeData decodes one message of the audit stream and judges each
// decision's record in it (one, or a batch's); none for a grant event.
func judgeData(cand *policy.Policy, data []byte) []judged {
	recs, err := messages.AuditRecords(data)
	if err != nil {
		return []judged{{v: verdict{skip: skipUnreadable}}}
	}
	out := make([]judged, len(recs))
	for i := range recs {
		out[i] = judged{key: messages.AuditRecordID(&recs[i]), v: judge(cand, &recs[i])}
	}
	return out
}
