package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	out := flag.String("out", "openapi", "directory to write swagger.json and openapi.json into")
	check := flag.String("check", "", "directory of committed documents to compare against (fails when stale)")
	flag.Parse()
	if err := run(*out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "openapi/gen:", err)
		os.Exit(1)
	}
}

func run(out, check string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mqgate-swag-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// swag writes Swagger 2 from the handler annotations.
	cmd := exec.Command("go", "tool", "swag", "init", "--quiet",
		"--dir", "api", "--generalInfo", "openapi_info.go",
		"--output", tmp, "--outputTypes", "json", "--useStructName")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("swag: %w", err)
	}
	v2raw, err := os.ReadFile(filepath.Join(tmp, "swagger.json"))
	if err != nil {
		return err
	}
	v3raw, err := convert(v2raw)
	if err != nil {
		return err
	}
	v2pretty, err := reindent(v2raw)
	if err != nil {
		return err
	}
	async, err := asyncAPI("api")
	if err != nil {
		return fmt.Errorf("asyncapi: %w", err)
	}
	files := map[string][]byte{"swagger.json": v2pretty, "openapi.json": v3raw, "asyncapi.json": async}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	if check == "" {
		return nil
	}
	stale := false
	for name, b := range files {
		old, err := os.ReadFile(filepath.Join(check, name))
		if err != nil || !bytes.Equal(old, b) {
			fmt.Fprintf(os.Stderr, "%s is stale: run `make openapi` and commit it\n", filepath.Join(check, name))
			stale = true
		}
	}
	if stale {
		return fmt.Errorf("committed OpenAPI documents are stale")
	}
	return nil
}

// convert turns Swagger 2 into a validated OpenAPI 3 document.
func convert(v2raw []byte) ([]byte, error) {
	var v2 openapi2.T
	if err := json.Unmarshal(v2raw, &v2); err != nil {
		return nil, fmt.Errorf("read swagger 2: %w", err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, fmt.Errorf("convert to openapi 3: %w", err)
	}
	// The server is wherever the document was fetched from.
	v3.Servers = openapi3.Servers{
		{URL: "/", Description: "The mqgate server that serves this document at /openapi.json"},
	}
	// Swagger 2 can only say "an API key in the Authorization header";
	// OpenAPI 3 says what it is: an HTTP bearer token.
	if v3.Components != nil {
		if ref, ok := v3.Components.SecuritySchemes["BearerAuth"]; ok && ref.Value != nil {
			ref.Value = openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer").
				WithDescription(ref.Value.Description)
		}
	}
	for _, path := range v3.Paths.Map() {
		for _, op := range path.Operations() {
			for code, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil || status < 400 || ref.Value == nil {
					continue
				}
				// Every error answer is RFC 9457 problem details.
				if mt := ref.Value.Content.Get("application/json"); mt != nil {
					ref.Value.Content = openapi3.Content{"application/problem+json": mt}
				}
			}
		}
	}
	if err := refine(v3); err != nil {
		return nil, fmt.Errorf("refine: %w", err)
	}
	if err := v3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the generated OpenAPI 3 document is invalid: %w", err)
	}
	b, err := json.MarshalIndent(v3, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func reindent(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
