package api

import (
	"context"
	"testing"

	"github.com/mqgate/mqgate/backend/embedded"
	"github.com/mqgate/mqgate/core/engine"
)

// openEmbedded opens the embedded backend in a temporary directory, as
// `mqgate serve` does (embedded.Open), and closes it when the test ends.
func openEmbedded(t testing.TB) *embedded.Backend {
	t.Helper()
	be, err := embedded.Open(embedded.Options{Engine: engine.Options{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = be.Close(context.Background()) })
	return be
}
