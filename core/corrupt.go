package core

import "time"

// CorruptMessage is a stored message that failed its checksum (or no
// longer decodes) when it was read, and was set aside: counted, listed and
// moved past, never delivered and never skipped silently.
type CorruptMessage struct {
	Topic           string
	QueueID         int   // -1 when the record could not be placed
	QueueOffset     int64 // -1 when the record could not be placed
	CommitLogOffset int64
	// MessageID is "" when the id could not be read, or the id index does
	// not confirm it.
	MessageID  string
	Reason     string
	DetectedAt time.Time
}
