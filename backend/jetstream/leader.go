package jetstream

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Reads that decide something (a message's fate, a replayed publish, a
// lease override, a group config) go to the stream leader with
// STREAM.MSG.GET, never a direct get: a direct get may be answered by a
// replica that is still catching up, whose 404 means "not applied here
// yet", not "gone". The leader has applied everything it acknowledged.

// msgGet is a STREAM.MSG.GET request: the message at Seq; with
// NextBySubj the first at or after Seq on that subject; LastBySubj the
// last on a subject.
type msgGet struct {
	Seq        uint64 `json:"seq,omitempty"`
	NextBySubj string `json:"next_by_subj,omitempty"`
	LastBySubj string `json:"last_by_subj,omitempty"`
}

// leaderMsg reads one message from stream's leader;
// jsapi.ErrMsgNotFound when there is none.
func (b *Backend) leaderMsg(ctx context.Context, stream string, req msgGet) (*jsapi.RawStreamMsg, error) {
	body, _ := json.Marshal(req)
	var raw *jsapi.RawStreamMsg
	err := b.retryRead(ctx, func(ctx context.Context) error {
		rctx, cancel := b.ctx(ctx)
		defer cancel()
		resp, err := b.nc.RequestWithContext(rctx, "$JS.API.STREAM.MSG.GET."+stream, body)
		if err != nil {
			return err
		}
		var r struct {
			Message *struct {
				Subject string    `json:"subject"`
				Seq     uint64    `json:"seq"`
				Hdrs    []byte    `json:"hdrs"`
				Data    []byte    `json:"data"`
				Time    time.Time `json:"time"`
			} `json:"message"`
			Error *jsapi.APIError `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			return core.Errorf(core.EUnavailable, "JetStream: bad STREAM.MSG.GET answer: %v", err)
		}
		if r.Error != nil {
			if r.Error.Code == 404 {
				if r.Error.ErrorCode == errCodeStreamNotFound {
					return jsapi.ErrStreamNotFound
				}
				return jsapi.ErrMsgNotFound
			}
			return r.Error
		}
		if r.Message == nil {
			return jsapi.ErrMsgNotFound
		}
		m := &jsapi.RawStreamMsg{Subject: r.Message.Subject, Sequence: r.Message.Seq, Data: r.Message.Data,
			Time: r.Message.Time, Header: nats.Header{}}
		if len(r.Message.Hdrs) > 0 {
			if m.Header, err = nats.DecodeHeadersMsg(r.Message.Hdrs); err != nil {
				return core.Errorf(core.EUnavailable, "JetStream: bad message headers: %v", err)
			}
		}
		raw = m
		return nil
	})
	return raw, err
}
