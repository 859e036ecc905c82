package engine

// WatchTopics returns a channel that receives a topic's name after a
// change of it has committed: created, grown (or otherwise updated) or
// deleted — user topics and %RETRY% / %DLQ% topics alike. Consumers
// rebalance on it instead of waiting for their periodic rebalance. cancel
// ends the watch (safe to call more than once); the channel is closed
// after cancel or Close. Changes coalesce (internal/watch): a slow reader
// sees each changed name at least once, never a backlog.
func (e *Engine) WatchTopics() (ch <-chan string, cancel func()) {
	return e.watchers.Watch()
}
