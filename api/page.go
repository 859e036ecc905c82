package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mqgate/mqgate/core"
)

// Cursor pagination of the topic and group lists. Names sort bytewise; a
// page holds up to limit names after the cursor, and nextCursor (the last
// name of a full page) continues it. The cursor is opaque to clients:
// today it is the last name returned, so a resource created or deleted
// between pages neither repeats nor shifts the others. Old clients send no
// parameters and get the first page of defaultListLimit, which holds every
// topic or group of nearly all installations; nextCursor tells when it
// does not.
const (
	defaultListLimit = 1000
	maxListLimit     = 1000
)

// pageParams reads limit and cursor from the query.
func pageParams(r *http.Request) (limit int, cursor string, err error) {
	q := r.URL.Query()
	limit = defaultListLimit
	var fe fieldErrors
	if _, ok := q["limit"]; ok { // given empty is not "absent": it is not a number
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxListLimit {
			fe.add("limit", "must be an integer in 1.."+strconv.Itoa(maxListLimit))
		}
		limit = n
	}
	cursor = q.Get("cursor")
	if cursor != "" && !core.ValidName(cursor) {
		fe.add("cursor", "is not a cursor returned by this listing")
	}
	return limit, cursor, fe.err()
}

// page returns the items of names (any order) after cursor, at most
// limit of them in name order, and the next cursor ("" on the last page).
func page[T any](items []T, name func(T) string, limit int, cursor string) ([]T, string) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	start, _ := slices.BinarySearchFunc(items, cursor, func(it T, c string) int { return strings.Compare(name(it), c) })
	if start < len(items) && cursor != "" && name(items[start]) == cursor {
		start++
	}
	items = items[start:]
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, name(items[len(items)-1])
}
