package main

const upstreamEnv = "SIGNOFF_TEST_UPSTREAM"

func serveTestUpstream() int { return 1 }
