package redisstore

// SetCompressMin changes the payload size from which payloads are
// compressed (math.MaxInt: never) and returns a func that restores it. For
// the memory report only; not safe while stores are in use.
func SetCompressMin(n int) (restore func()) {
	old := compressMin
	compressMin = n
	return func() { compressMin = old }
}
