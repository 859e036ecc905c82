// Command k8sschema writes standalone JSON schemas for kubeconform from
// the Kubernetes schemas the kubernetes-validate package (PyPI) ships.
//
// Its schemas point into one shared file (a $ref of
// "/api/_definitions.json#/$defs/X", resolved against an https $id), which
// kubeconform cannot follow offline. Each schema written here carries the
// definitions itself, its references rewritten to "#/$defs/X", under the
// file name kubeconform's default layout expects
// (<kind>[-<group>]-<version>.json), so
//
//	kubeconform -schema-location 'OUT/{{ .ResourceKind }}{{ .KindSuffix }}.json'
//
// validates offline. Only the kinds of the manifests given are written.
//
//	k8sschema -src <kubernetes_validate>/kubernetes-json-schema/v1.33.0-local-strict -out DIR manifest.yaml...
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	src := flag.String("src", "", "a version directory of kubernetes-validate's schemas (…/v1.33.0-local-strict)")
	out := flag.String("out", "", "directory to write the standalone schemas to")
	flag.Parse()
	if *src == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: k8sschema -src DIR -out DIR manifest.yaml...")
		os.Exit(2)
	}
	if err := run(*src, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschema:", err)
		os.Exit(1)
	}
}

func run(src, out string, manifests []string) error {
	defs, err := loadDefs(filepath.Join(src, "_definitions.json"))
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, m := range manifests {
		if err := schemaNames(m, names); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name := range names {
		raw, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // not a built-in kind (a CRD): kubeconform reports or skips it
		}
		if err != nil {
			return err
		}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		delete(schema, "$id") // its https base is what made the refs remote
		schema["$defs"] = defs
		b, err := json.Marshal(schema)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(`"/api/_definitions.json#/$defs/`), []byte(`"#/$defs/`))
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// loadDefs reads the shared definitions, with their own references
// (already "#/$defs/…" inside that file) as they are.
func loadDefs(file string) (any, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d struct {
		Defs json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &d); err != nil || len(d.Defs) == 0 {
		return nil, fmt.Errorf("%s: no $defs (%v)", file, err)
	}
	var defs any
	b := bytes.ReplaceAll(d.Defs, []byte(`"/api/_definitions.json#/$defs/`), []byte(`"#/$defs/`))
	return defs, json.Unmarshal(b, &defs)
}

// schemaNames adds the schema file name of every document in the
// multi-document YAML file m.
func schemaNames(m string, names map[string]bool) error {
	raw, err := os.ReadFile(m)
	if err != nil {
		return err
	}
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			if errors.Is(err, io.EOF) {
				continue
			}
			return fmt.Errorf("%s: %w", m, err)
		}
		if obj.Kind == "" {
			continue
		}
		name := strings.ToLower(obj.Kind)
		group, version, ok := strings.Cut(obj.APIVersion, "/")
		if !ok {
			group, version = "", obj.APIVersion
		}
		if group != "" {
			name += "-" + strings.ToLower(strings.Split(group, ".")[0])
		}
		names[name+"-"+version+".json"] = true
	}
	return nil
}
