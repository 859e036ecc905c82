package api

import (
	"regexp"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/mqgate/mqgate/core"
)

// What the OpenAPI document must say beyond what swag reads from the
// annotations. openapi/gen reads these tables (and the validate tags of
// the types below) to refine the document; openapi_rules_test.go checks
// the committed document against the same types. One source: the code
// that enforces a rule is the code the document is written from.

// RequestBodies are the request body types. Their schemas get
// additionalProperties: false (the strict decoder refuses unknown
// members), required and every constraint their validate tags enforce.
var RequestBodies = []any{
	PublishRequest{}, PublishBatchRequest{}, TopicRequest{}, GroupRequest{}, SubscriptionBody{},
	ConsumeFrom{}, PushBody{}, OffsetResetRequest{}, ReceiveRequest{}, AckRequest{}, NackRequest{},
	ExtendRequest{}, RedriveRequest{},
	BlockedKeyRequest{}, // blocked.go
}

// ResponseBodies are the response body types. Their schemas list every
// member the server always sends as required and mark members it may send
// as null nullable (a pointer without omitempty).
var ResponseBodies = []any{
	Topic{}, TopicStats{}, QueueStats{}, TopicList{}, PublishResult{}, PublishBatchResult{},
	Message{}, MessageList{}, Group{}, ConsumeFromView{}, PushView{}, GroupStatus{}, PushStatus{},
	GroupList{}, OffsetList{}, QueueOffset{}, ReceiveResponse{}, ReceivedMessage{}, HandleResults{},
	HandleResult{}, DLQPage{}, RedriveResult{}, Health{}, Problem{}, FieldProblem{},
	EmptyReceive{}, BlockedKey{}, BlockedList{}, KeyLag{}, KeyLagList{}, Timeline{}, TimelineEvent{}, // stuck consumers
	DeadLetter{}, Job{}, DryRunResult{}, CorruptList{}, CorruptMessage{}, // dead letters, jobs, set-aside records
	LimitsResponse{}, KeyLimits{}, TopicLimit{}, GroupLimit{}, LimitPolicy{}, // API-key limits (admin_limits.go)
}

// FieldGroup is a rule over several members of one request type that no
// single validate tag carries: exactly one of them, or at most one.
type FieldGroup struct {
	Type       string   // the schema (Go type) name
	ExactlyOne []string // exactly one of these members is present
	AtMostOne  []string // at most one of these members is present
}

// FieldGroups are the checks toPutMessage makes (the OpenAPI document
// says them with oneOf and not/anyOf).
var FieldGroups = []FieldGroup{
	{Type: "PublishRequest", ExactlyOne: []string{"body", "bodyBase64"}},
	{Type: "PublishRequest", AtMostOne: []string{"delayLevel", "delaySeconds", "deliverAt"}},
}

// Name rules: topic and group names (core.ValidName), and the topics a
// read may name (system topics included: %RETRY%g, %DLQ%g and the
// schedule topic).
const (
	NamePattern      = core.NamePattern
	ReadTopicPattern = `^((%RETRY%|%DLQ%)?[A-Za-z0-9_-]{1,127}|` + core.ScheduleTopic + `)$`
	// ResetTopicPattern is a subscribed topic or the group's retry topic.
	ResetTopicPattern = `^(%RETRY%)?[A-Za-z0-9_-]{1,127}$`
)

// PatternTags are the validate tags that check a string against a
// pattern; newValidator registers them and openapi/gen writes the
// pattern into the document.
var PatternTags = map[string]string{
	"base64":     `^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`,
	"name":       NamePattern,
	"resettopic": ResetTopicPattern,
}

// registerPatterns adds PatternTags to v.
func registerPatterns(v *validator.Validate) {
	for tag, pat := range PatternTags {
		check := regexp.MustCompile(pat).MatchString
		if tag == "base64" {
			check = isStdBase64 // the same language without a regexp over megabytes
		}
		if err := v.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
			return check(fl.Field().String())
		}); err != nil {
			panic(err)
		}
	}
}

// isStdBase64 reports whether s is padded standard base64 (RFC 4648 §4):
// PatternTags["base64"], checked in one pass.
func isStdBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	pad := 0
	if strings.HasSuffix(s, "==") {
		pad = 2
	} else if strings.HasSuffix(s, "=") {
		pad = 1
	}
	for i := 0; i < len(s)-pad; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// PathParamPattern is the pattern of a path parameter of an operation
// (method in upper case), or "" when it has none: {group} is a name,
// {topic} a name where the request changes or publishes (a system topic
// there answers 403 before the pattern is checked) and any readable topic
// on a GET.
func PathParamPattern(method, param string) string {
	switch param {
	case "group":
		return NamePattern
	case "topic":
		if strings.EqualFold(method, "GET") {
			return ReadTopicPattern
		}
		return NamePattern
	}
	return ""
}

// ParamLimits are the bounds of string path and query parameters the
// handlers check by hand: [minLength, maxLength].
var ParamLimits = map[string][2]int{
	"messageId": {1, core.MaxIDLength},
	"key":       {1, core.MaxKeyLen}, // a message key, as published (PublishRequest.keys)
}

// ParamPatterns are the patterns of query parameters the handlers parse
// by hand, by name or by operationId.name (which wins).
var ParamPatterns = map[string]string{
	// cursor: the nextCursor of a DLQ page, a decimal position; of a
	// topic or group list, a name. Empty: the first page.
	"listDeadLetters.cursor": `^[0-9]{0,18}$`,
	"listTopics.cursor":      `^[A-Za-z0-9_-]{0,127}$`,
	"listGroups.cursor":      `^[A-Za-z0-9_-]{0,127}$`,
	"listBlockedKeys.cursor": `^[0-9]{0,9}$`, // a position in the list
	// consumerId (GET offsets): a BROADCASTING consumer's name; empty is
	// the same as absent.
	"consumerId": `^[A-Za-z0-9_-]{0,127}$`,
}
