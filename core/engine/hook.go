package engine

import (
	"context"

	"github.com/mqgate/mqgate/core/store"
)

// CommitHook runs hook in the store's next group commit, with no message:
// other packages' small durable writes (consumer positions) share the
// transaction and the fsync of publishes instead of racing the writer for
// bbolt's write lock. hook may run more than once (store.Hook).
func (e *Engine) CommitHook(ctx context.Context, hook store.Hook) error {
	_, err := e.st.Commit(ctx, nil, hook)
	return err
}
