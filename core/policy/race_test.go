//go:build race

package policy

// raceEnabled: the race detector is on (allocation counts differ).
const raceEnabled = true
