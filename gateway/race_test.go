//go:build race

package gateway

// raceEnabled: the race detector is on (timing figures scale).
const raceEnabled = true
