package api

import (
	"net/http"

	"github.com/mqgate/mqgate/gateway"
)

// nack answers RECONSUME_LATER with the request's reason when the
// consume service takes one (gateway.ReasonNacker), without it otherwise.
func (s *Server) nack(r *http.Request, group string, req *NackRequest) ([]gateway.HandleResult, error) {
	if rn, ok := s.consume.(gateway.ReasonNacker); ok && req.Reason != "" {
		return rn.NackReason(r.Context(), group, req.ReceiptHandles, req.DelayLevel, req.Reason)
	}
	return s.consume.Nack(r.Context(), group, req.ReceiptHandles, req.DelayLevel)
}
