package api

import "github.com/mqgate/mqgate/core"

// filterTypeOf is the filterType a group shows: TAG when stored as "".
func filterTypeOf(s core.Subscription) string {
	if s.FilterType == "" {
		return core.FilterTag
	}
	return s.FilterType
}
