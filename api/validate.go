package api

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"
)

// newValidator returns a validator that names fields by their JSON names,
// so errors read `messages[2].delayLevel`, not `Messages[2].DelayLevel`.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	registerPatterns(v)
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	return v
}

// validateStruct runs the validator tags of req and returns an
// *invalidError listing every failing field, or nil.
func (s *Server) validateStruct(req any) error {
	var fe fieldErrors
	s.checkStruct(req, &fe)
	return fe.err()
}

// decodeValid reads a JSON request body into req (decodeJSON: limit,
// 413, 415, and whether an empty body is allowed) and runs req's validator
// tags: the first step of every handler whose body has nothing to check
// beyond its tags.
func (s *Server) decodeValid(w http.ResponseWriter, r *http.Request, limit int64, req any, allowEmpty bool) error {
	if err := decodeJSON(w, r, limit, req, allowEmpty); err != nil {
		return err
	}
	return s.validateStruct(req)
}

// checkStruct runs the validator tags of req and adds every failing field
// to fe, so a handler can add its own checks and answer them all at once.
// A type with a hand check (check.go) gets that instead of the validator.
func (s *Server) checkStruct(req any, fe *fieldErrors) {
	if c, ok := req.(checker); ok {
		c.check(fe)
		return
	}
	s.checkTags(req, fe)
}

// checkTags runs the validator over req's tags, adding every failing
// field to fe. A non-validation error (a malformed tag) is a bug and
// panics.
func (s *Server) checkTags(req any, fe *fieldErrors) {
	err := s.validate.Struct(req)
	if err == nil {
		return
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		panic(err)
	}
	for _, e := range ves {
		fe.add(fieldPath(e.Namespace()), fieldMessage(e))
	}
}

// fieldPath drops the Go type name the validator puts first.
func fieldPath(ns string) string {
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

// fieldMessage words one validator failure for users.
func fieldMessage(e validator.FieldError) string {
	kind := e.Kind()
	sized := func(word string) string {
		switch kind {
		case reflect.String:
			return fmt.Sprintf("must be %s %s characters", word, e.Param())
		case reflect.Slice, reflect.Array, reflect.Map:
			return fmt.Sprintf("must have %s %s items", word, e.Param())
		}
		return ""
	}
	if e.StructField() == "BodyBase64" { // omitempty,min=4,base64: one sentence (check.go)
		if s, ok := e.Value().(string); ok && s == "" {
			return msgNotEmpty
		}
		return badBase64
	}
	switch e.Tag() {
	case "required":
		return "is required"
	case "min", "gte":
		if m := sized("at least"); m != "" {
			return m
		}
		return "must be ≥ " + e.Param()
	case "max", "lte":
		if m := sized("at most"); m != "" {
			return m
		}
		return "must be ≤ " + e.Param()
	case "oneof":
		return "must be one of " + strings.ReplaceAll(e.Param(), " ", ", ")
	case "excludes":
		return fmt.Sprintf("must not contain %q", e.Param())
	case "printascii":
		return "must be printable ASCII"
	}
	if e.Tag() == "base64" {
		return badBase64
	}
	if pat, ok := PatternTags[e.Tag()]; ok {
		return "must match " + pat
	}
	return fmt.Sprintf("fails the %q rule", e.Tag())
}
