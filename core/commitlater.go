package core

import "context"

type lazyCommitKey struct{}

// WithLazyCommit marks the durable writes made under ctx as ones that may
// wait a few milliseconds for other writes to share their commit (the
// store's Options.Linger). A consumer's background position writes are
// such writes: committing each alone costs a transaction and two fsyncs,
// while under any publish load they can ride along with a publish for
// free. Writes a caller waits on before going on (a rebalance handing a
// queue over) must not be marked.
func WithLazyCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, lazyCommitKey{}, true)
}

// IsLazyCommit reports whether ctx was marked by WithLazyCommit.
func IsLazyCommit(ctx context.Context) bool {
	v, _ := ctx.Value(lazyCommitKey{}).(bool)
	return v
}
