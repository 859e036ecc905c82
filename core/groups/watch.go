package groups

// Watch returns a channel that receives the group's name whenever a group
// config changes or is deleted, its offsets are reset, its set of live
// clients changes or one of its orderly queue locks is released; cancel
// stops the watch (and is safe to call more than once). The channel is
// closed after cancel or Close. Changes coalesce (internal/watch): a slow
// reader sees each changed name at least once, never a backlog.
func (r *Registry) Watch() (ch <-chan string, cancel func()) {
	return r.watchers.Watch()
}

// notifyLocked tells every watcher that group changed. Callers hold r.mu
// (so a change and its announcement are ordered with other changes);
// Notify itself never blocks.
func (r *Registry) notifyLocked(group string) {
	r.watchers.Notify(group)
}
