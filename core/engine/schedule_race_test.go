//go:build race

package engine

// raceEnabled shrinks the heaviest schedule tests under -race, which slows
// bbolt writes about tenfold.
const raceEnabled = true
