package stream

import (
	"testing"

	"go.uber.org/goleak"
)

// Every stream's reader ends with it: no goroutine outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
