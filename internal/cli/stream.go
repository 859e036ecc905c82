package cli

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// What pub and sub share to talk over the WebSocket streams
// (docs/streaming.md): the client, with the same URL, key and User-Agent
// as the REST calls, and the exit code of a stream's failure.

func (e *env) streamClient() *stream.Client {
	return &stream.Client{BaseURL: strings.TrimRight(e.url, "/"), Key: e.key,
		Header: http.Header{"User-Agent": {"mqgate-cli"}}}
}

// streamError is the exitError of a stream's failure: a refused upgrade
// by its HTTP status as check() maps it, an error frame by its problem's
// status, a close by its code.
func streamError(err error) error {
	var he *stream.HTTPError
	var pe *stream.ProblemError
	var ce *stream.ClosedError
	switch {
	case errors.As(err, &he):
		msg := fmt.Sprintf("HTTP %d", he.StatusCode)
		if he.Problem != nil {
			msg = problemMessage(msg, *he.Problem)
		}
		return &exitError{code: statusCode(he.StatusCode), msg: msg}
	case errors.As(err, &pe):
		return &exitError{code: statusCode(pe.Problem.Status), msg: problemMessage(fmt.Sprintf("HTTP %d", pe.Problem.Status), pe.Problem)}
	case errors.As(err, &ce):
		code := ExitServer
		switch ce.Code {
		case 4000: // the group or topic was deleted
			code = ExitNotFound
		case 1008: // the key was revoked
			code = ExitForbidden
		}
		return &exitError{code: code, msg: err.Error()}
	}
	return &exitError{code: ExitServer, msg: err.Error()}
}

// statusCode is check()'s mapping of an HTTP status to an exit code.
func statusCode(st int) int {
	switch {
	case st == http.StatusNotFound:
		return ExitNotFound
	case st == http.StatusConflict || st == http.StatusUnprocessableEntity:
		return ExitConflict
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return ExitForbidden
	case st == http.StatusTooManyRequests || st >= 500:
		return ExitServer
	case st >= 400:
		return ExitUsage
	}
	return ExitServer
}

func problemMessage(prefix string, p apiclient.Problem) string {
	msg := prefix + " " + p.Title
	if p.Detail != nil {
		msg += ": " + *p.Detail
	}
	if p.Errors != nil {
		for _, fe := range *p.Errors {
			msg += fmt.Sprintf("\n  %s: %s", str(fe.Field), str(fe.Message))
		}
	}
	return msg
}
