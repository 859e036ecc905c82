package api

import (
	"net/http"

	"github.com/mqgate/mqgate/core"
)

// nack answers RECONSUME_LATER with the request's reason ("" for none).
func (s *Server) nack(r *http.Request, group string, req *NackRequest) ([]core.HandleResult, error) {
	return s.backend.Nack(r.Context(), group, req.ReceiptHandles, req.DelayLevel, req.Reason)
}
