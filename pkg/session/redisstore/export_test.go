package redisstore

// SetCompressMin changes the payload size from which payloads are
// compressed (math.MaxInt: never) and returns a func that restores it. For
// the memory report only; not safe while stores are in use.
func SetCompressMin(n int) (restore func()) {
	old := compressMin
	compressMin = n
	return func() { compressMin = old }
}

// QueuedReads returns how many Lookups wait for a round trip to end.
func QueuedReads(s *Store) int {
	s.reads.mu.Lock()
	defer s.reads.mu.Unlock()
	return len(s.reads.queue)
}

// MovedMark and SplitFields let the migration test check what brokers of
// the old grant layout make of the moved mark.
const MovedMark = movedMark

var SplitFields = splitFields
