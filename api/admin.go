package api

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// Backuper writes a consistent snapshot of the store file while the server
// serves (engine.Engine): start receives the snapshot's size before its
// first byte.
type Backuper interface {
	Backup(w io.Writer, start func(size int64)) (int64, error)
}

// handleBackup streams a consistent copy of the store file.
//
//	@Summary		Back up the store
//	@Description	Streams a consistent snapshot of the whole store file (bbolt, one read transaction) while the server keeps serving: it holds every message whose publish was answered before the request, and the consumer groups' state as committed then. Save it and start a server on it as mqgate.db to restore (docs/operations.md, "Backup and restore"); `mqgate backup --url` downloads and verifies it. Content-Length is the snapshot's size; a body cut short means the backup failed.
//	@Tags			operations
//	@Produce		application/octet-stream,json
//	@Success		200	{file}		binary	"The store file"
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant (admin)"
//	@Failure		503	{object}	Problem	"Shutting down, or no store to back up"
//	@ID				backupStore
//	@Security		BearerAuth
//	@Router			/v1/admin/backup [get]
func (s *Server) handleBackup(w http.ResponseWriter, r *http.Request) {
	if s.backup == nil {
		sendProblem(w, r, newProblem("unavailable", "this server has no store to back up"))
		return
	}
	started := false
	n, err := s.backup.Backup(w, func(size int64) {
		started = true
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("Content-Disposition", `attachment; filename="mqgate-`+time.Now().UTC().Format("20060102T150405Z")+`.db"`)
		w.WriteHeader(http.StatusOK)
	})
	if err == nil {
		loggerFrom(r.Context(), s.log).Info().Int64("bytes", n).Msg("backup streamed")
		return
	}
	if !started {
		s.writeProblem(w, r, err)
		return
	}
	// The body stops short of its Content-Length: the client sees the
	// backup fail, never a truncated file as a whole one.
	loggerFrom(r.Context(), s.log).Error().Err(err).Int64("bytes", n).Msg("backup failed mid-stream")
}
