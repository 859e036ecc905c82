package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoBackendTypeAssertions: the HTTP layer holds a core.Backend and
// calls it; it never probes the backend for optional interfaces (issue
// 26). Any type assertion or type switch on s.backend (or any expression
// naming the backend) in api's non-test files fails this test.
func TestNoBackendTypeAssertions(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, pos := range backendAssertions(f) {
			t.Errorf("%s: type assertion on the backend; add the capability to core.Backend instead", fset.Position(pos))
		}
	}
	if checked == 0 {
		t.Fatal("no api source files found")
	}
}

// TestBackendAssertionCheckFinds: the check above finds what it looks for
// (so it cannot pass by finding nothing).
func TestBackendAssertionCheckFinds(t *testing.T) {
	src := `package api
func (s *Server) a() { _, _ = s.backend.(interface{ KeyLags() }) }
func (c *consumeStream) b() { switch c.s.backend.(type) { } }
func (s *Server) c() { b := s.backend; _, _ = b.(interface{ X() }) }
func (s *Server) d() { _, _ = s.log.(interface{ X() }) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(backendAssertions(f)); got != 3 {
		t.Fatalf("found %d backend assertions, want 3 (a, b, c; not d)", got)
	}
}

// backendAssertions returns the positions of type assertions (and type
// switches) in f whose operand is the backend: an expression ending in
// .backend, or a local variable assigned from one.
func backendAssertions(f *ast.File) []token.Pos {
	isBackend := func(e ast.Expr) bool {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			return x.Sel.Name == "backend"
		case *ast.Ident:
			return x.Name == "backend"
		}
		return false
	}
	// Locals holding the backend: b := s.backend.
	aliases := map[*ast.Object]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
			for i, r := range as.Rhs {
				if id, ok := as.Lhs[i].(*ast.Ident); ok && isBackend(r) && id.Obj != nil {
					aliases[id.Obj] = true
				}
			}
		}
		return true
	})
	var out []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		if ta, ok := n.(*ast.TypeAssertExpr); ok {
			x := ast.Unparen(ta.X)
			if id, ok := x.(*ast.Ident); ok && id.Obj != nil && aliases[id.Obj] || isBackend(x) {
				out = append(out, ta.Pos())
			}
		}
		return true
	})
	return out
}
