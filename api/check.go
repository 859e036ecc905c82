package api

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// Hand checks for the hot request bodies (publish, batch publish,
// receive, ack, nack, extend). They apply exactly the rules of the types' validate
// tags, with the validator's words and field paths, without its
// reflection: the validator cost a batch of 100 publishes 11% of the
// server's CPU and an ack request 2%. The tags stay: they document the
// rules (and the OpenAPI limits beside them), TestHandChecksMatchTags
// holds each check to the validator on the same values, and
// TestRequestLimitsAreCores holds the tags (and
// TestOpenAPILimitsAreCores the document) to core's limits, which the
// checks read. checkStruct uses a type's check when it has one.

// checker is a request body with a hand check (checkStruct).
type checker interface {
	// check adds each failing field to fe, as the validator would.
	check(fe *fieldErrors)
}

// The limits in seconds, as the request fields count them (core/limits.go
// defines them as durations).
const (
	maxDelaySeconds     = int64(core.MaxDelay / time.Second)     // delaySeconds
	maxWaitSeconds      = int64(core.MaxWait / time.Second)      // waitSeconds
	minInvisibleSeconds = int64(core.MinInvisible / time.Second) // invisibleSeconds
	maxInvisibleSeconds = int64(core.MaxInvisible / time.Second) // invisibleSeconds
)

// entryField is the path of a field of a request: name itself, or
// messages[i].name for entry i of a batch (i ≥ 0). It is only built for
// a failing field, so a valid request pays nothing for it.
func entryField(i int, name string) string {
	if i < 0 {
		return name
	}
	return "messages[" + strconv.Itoa(i) + "]." + name
}

// runesOver reports whether s has more than n characters (the validator
// counts runes for max= on strings); a string of at most n bytes is
// never counted.
func runesOver(s string, n int) bool {
	return len(s) > n && utf8.RuneCountInString(s) > n
}

// The validator's words (fieldMessage) for the rules used below.
func mostChars(n int) string { return "must be at most " + strconv.Itoa(n) + " characters" }
func mostItems(n int) string { return "must have at most " + strconv.Itoa(n) + " items" }
func atLeast(n int64) string { return "must be ≥ " + strconv.FormatInt(n, 10) }
func atMost(n int64) string  { return "must be ≤ " + strconv.FormatInt(n, 10) }

const (
	msgRequired     = "is required"
	msgAtLeastOne   = "must have at least 1 items"
	msgNoDoublePipe = `must not contain "||"`
	msgBase64Rule   = `fails the "base64" rule`
	msgMin4Chars    = "must be at least 4 characters"
	msgNotEmpty     = "must not be empty"
)

func (req *PublishRequest) check(fe *fieldErrors) { req.checkEntry(-1, fe) }

// checkEntry checks the validate tags of a publish request, or of entry
// i of a batch, in field order.
func (req *PublishRequest) checkEntry(i int, fe *fieldErrors) {
	if b := req.BodyBase64; b != nil { // omitempty,min=4,base64
		// One sentence for every way it fails, never the pattern.
		switch {
		case *b == "":
			fe.add(entryField(i, "bodyBase64"), msgNotEmpty)
		case len(*b) < 16 && utf8.RuneCountInString(*b) < 4, !isStdBase64(*b):
			fe.add(entryField(i, "bodyBase64"), badBase64)
		}
	}
	switch { // max=MaxTagsLen,excludes=||
	case runesOver(req.Tags, core.MaxTagsLen):
		fe.add(entryField(i, "tags"), mostChars(core.MaxTagsLen))
	case strings.Contains(req.Tags, "||"):
		fe.add(entryField(i, "tags"), msgNoDoublePipe)
	}
	if len(req.Keys) > core.MaxKeys { // max=MaxKeys,dive,required,max=MaxKeyLen
		fe.add(entryField(i, "keys"), mostItems(core.MaxKeys))
	} else {
		for j, k := range req.Keys {
			switch {
			case k == "":
				fe.add(entryField(i, "keys["+strconv.Itoa(j)+"]"), msgRequired)
			case runesOver(k, core.MaxKeyLen):
				fe.add(entryField(i, "keys["+strconv.Itoa(j)+"]"), mostChars(core.MaxKeyLen))
			}
		}
	}
	// max=MaxProperties,dive,keys,required,max=MaxPropertyNameLen,endkeys,max=MaxPropertyValueLen;
	// the validator checks the name, then the value, under one path, so
	// a bad name hides its value's problem (fieldErrors keeps the first).
	if len(req.Properties) > core.MaxProperties {
		fe.add(entryField(i, "properties"), mostItems(core.MaxProperties))
	} else {
		for k, v := range req.Properties {
			switch {
			case k == "":
				fe.add(entryField(i, "properties["+k+"]"), msgRequired)
			case runesOver(k, core.MaxPropertyNameLen):
				fe.add(entryField(i, "properties["+k+"]"), mostChars(core.MaxPropertyNameLen))
			case runesOver(v, core.MaxPropertyValueLen):
				fe.add(entryField(i, "properties["+k+"]"), mostChars(core.MaxPropertyValueLen))
			}
		}
	}
	if runesOver(req.ShardingKey, core.MaxKeyLen) { // max=MaxKeyLen
		fe.add(entryField(i, "shardingKey"), mostChars(core.MaxKeyLen))
	}
	if d := req.DelayLevel; d != nil && *d < 1 { // omitempty,min=1
		fe.add(entryField(i, "delayLevel"), atLeast(1))
	}
	if d := req.DelaySeconds; d != nil { // omitempty,min=0,max=maxDelaySeconds
		switch {
		case *d < 0:
			fe.add(entryField(i, "delaySeconds"), atLeast(0))
		case *d > maxDelaySeconds:
			fe.add(entryField(i, "delaySeconds"), atMost(maxDelaySeconds))
		}
	}
}

// check: messages required,min=1,max=MaxBatch,dive.
func (req *PublishBatchRequest) check(fe *fieldErrors) {
	switch n := len(req.Messages); {
	case req.Messages == nil:
		fe.add("messages", msgRequired)
	case n == 0:
		fe.add("messages", msgAtLeastOne)
	case n > core.MaxBatch:
		fe.add("messages", mostItems(core.MaxBatch))
	default:
		for i := range req.Messages {
			req.Messages[i].checkEntry(i, fe)
		}
	}
}

// checkHandles: receiptHandles required,min=1,max=MaxHandles,dive,max=MaxHandleLen.
func checkHandles(handles []string, fe *fieldErrors) {
	switch {
	case handles == nil:
		fe.add("receiptHandles", msgRequired)
	case len(handles) == 0:
		fe.add("receiptHandles", msgAtLeastOne)
	case len(handles) > core.MaxHandles:
		fe.add("receiptHandles", mostItems(core.MaxHandles))
	default:
		for j, h := range handles {
			if runesOver(h, policy.MaxHandleLen) {
				fe.add("receiptHandles["+strconv.Itoa(j)+"]", mostChars(policy.MaxHandleLen))
			}
		}
	}
}

func (req *AckRequest) check(fe *fieldErrors) { checkHandles(req.ReceiptHandles, fe) }

func (req *NackRequest) check(fe *fieldErrors) {
	checkHandles(req.ReceiptHandles, fe)
	if req.DelayLevel < -1 { // min=-1
		fe.add("delayLevel", atLeast(-1))
	}
	if runesOver(req.Reason, core.MaxReasonLength) { // omitempty,max=MaxReasonLength
		fe.add("reason", mostChars(core.MaxReasonLength))
	}
}

func (req *ExtendRequest) check(fe *fieldErrors) {
	checkHandles(req.ReceiptHandles, fe)
	switch s := req.InvisibleSeconds; { // required,min=1,max=MaxInvisible
	case s == 0:
		fe.add("invisibleSeconds", msgRequired)
	case int64(s) < minInvisibleSeconds:
		fe.add("invisibleSeconds", atLeast(minInvisibleSeconds))
	case int64(s) > maxInvisibleSeconds:
		fe.add("invisibleSeconds", atMost(maxInvisibleSeconds))
	}
}

// check: maxMessages omitempty,min=1,max=MaxReceiveMessages; waitSeconds
// omitempty,min=0,max=MaxWait; invisibleSeconds omitempty,min=1,max=MaxInvisible;
// consumerId omitempty,name.
func (req *ReceiveRequest) check(fe *fieldErrors) {
	if n := req.MaxMessages; n != nil {
		switch {
		case *n < 1:
			fe.add("maxMessages", atLeast(1))
		case *n > core.MaxReceiveMessages:
			fe.add("maxMessages", atMost(core.MaxReceiveMessages))
		}
	}
	if n := req.WaitSeconds; n != nil {
		switch {
		case *n < 0:
			fe.add("waitSeconds", atLeast(0))
		case int64(*n) > maxWaitSeconds:
			fe.add("waitSeconds", atMost(maxWaitSeconds))
		}
	}
	if n := req.InvisibleSeconds; n != nil {
		switch {
		case int64(*n) < minInvisibleSeconds:
			fe.add("invisibleSeconds", atLeast(minInvisibleSeconds))
		case int64(*n) > maxInvisibleSeconds:
			fe.add("invisibleSeconds", atMost(maxInvisibleSeconds))
		}
	}
	if req.ConsumerID != "" && !core.ValidName(req.ConsumerID) {
		fe.add("consumerId", "must match "+NamePattern)
	}
}
