// Package e2e holds mqgate's end-to-end tests: TestMain builds the real
// binary (with -race) once into a temp dir, and each test starts it on
// 127.0.0.1:0 with its own t.TempDir() data directory and talks HTTP to it.
// The kill -9 and graceful-shutdown tests signal the real process.
//
// TestPowerCut (powercut_test.go) puts the data directory on
// internal/lazyfs, a FUSE filesystem that forgets what was not synced,
// and cuts the power under load, 20 times by default; a longer run is
//
//	MQGATE_POWERCUT_CUTS=500 go test -race -timeout 60m -run 'TestPowerCut$' -v ./e2e
//
// (MQGATE_CHAOS_SEED replays a run's choices). It needs /dev/fuse and
// root (or fusermount3), and is skipped without /dev/fuse.
//
// It imports nothing of the project but what tests share (core for limits
// and names); everything else goes over the wire, as a user would. The
// store damage tests read page types with bbolt itself, on a copy of the
// file, to know which bytes to damage.
package e2e
