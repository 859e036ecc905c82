package api

import (
	"net/http"
)

// CorruptMessage is a stored message set aside because it failed its
// checksum when it was read: it is never delivered, and never skipped
// silently.
type CorruptMessage struct {
	// MessageID is the message's id when it could still be read and the
	// id index confirms it; absent otherwise.
	MessageID string `json:"messageId,omitempty" example:"0a1b2c3d4e5f60718293a4b5c6"`
	// Topic the message was published to.
	Topic string `json:"topic" example:"orders"`
	// QueueID is the queue it was in (-1 when the record is too damaged
	// to place; such records are counted under topic "" on /metrics
	// instead).
	QueueID int `json:"queueId" example:"3"`
	// QueueOffset is its offset in that queue (-1 when it cannot be
	// placed).
	QueueOffset int64 `json:"queueOffset" example:"1500"`
	// CommitLogOffset is the record's position in the store's commit log.
	CommitLogOffset int64 `json:"commitLogOffset" example:"98211"`
	// Reason says what is wrong with the record.
	Reason string `json:"reason" example:"corrupt record: checksum mismatch"`
	// DetectedAt is when a read first met it (RFC 3339, UTC, milliseconds).
	DetectedAt string `json:"detectedAt" format:"date-time" example:"2026-01-02T15:04:05.000Z"`
}

// CorruptList is the answer of GET /v1/topics/{topic}/corrupt.
type CorruptList struct {
	// Messages are the topic's set-aside messages in commit log order.
	Messages []CorruptMessage `json:"messages"`
}

// handleCorruptList lists a topic's messages set aside as corrupt.
//
//	@Summary		List a topic's corrupt messages
//	@Description	Lists the stored messages of the topic that failed their checksum when read (by a consumer's pull, a GET, or the start-up check). Each was set aside: counted in the topic's stats (stats.corrupt) and mqgate_store_corrupt_records, never delivered. docs/operations.md says what to do about them.
//	@Tags			topics
//	@Produce		json
//	@Param			topic	path		string		true	"Topic name"
//	@Success		200		{object}	CorruptList
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown topic"
//	@Failure		503		{object}	Problem
//	@ID				listCorruptMessages
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant (admin)"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic}/corrupt [get]
func (s *Server) handleCorruptList(w http.ResponseWriter, r *http.Request) {
	name, err := readTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	list, err := s.backend.CorruptMessages(name)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	out := CorruptList{Messages: make([]CorruptMessage, 0, len(list))}
	for _, c := range list {
		out.Messages = append(out.Messages, CorruptMessage{MessageID: c.MessageID, Topic: c.Topic, QueueID: c.QueueID,
			QueueOffset: c.QueueOffset, CommitLogOffset: c.CommitLogOffset, Reason: c.Reason, DetectedAt: formatTime(c.DetectedAt)})
	}
	writeJSON(w, http.StatusOK, out)
}
