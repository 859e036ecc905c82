package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// TestListPagination pages through topics and groups with limit and
// cursor, and checks old clients (no parameters) still get everything.
func TestListPagination(t *testing.T) {
	s := startServer(t, t.TempDir())
	var topics []string
	for _, n := range []string{"t4", "t1", "t3", "t0", "t2"} {
		createTopic(t, s, n, 1)
		topics = append(topics, n)
	}
	slices.Sort(topics)
	r := s.do(t, "PUT", "/v1/groups/g0", map[string]any{"subscriptions": []map[string]string{{"topic": "t0"}}})
	consumption := r.Status != http.StatusServiceUnavailable
	groups := []string{"g0", "g1", "g2"}
	if consumption {
		for _, g := range groups[1:] {
			want(t, s.do(t, "PUT", "/v1/groups/"+g, map[string]any{"subscriptions": []map[string]string{{"topic": "t0"}}}), http.StatusCreated)
		}
	}

	type listPage struct {
		Topics     []struct{ Name string }
		Groups     []struct{ Name string }
		NextCursor string
	}
	walk := func(path string, limit int) (names []string, pages int) {
		cursor := ""
		for {
			q := fmt.Sprintf("%s?limit=%d", path, limit)
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			r := s.do(t, "GET", q, nil)
			want(t, r, http.StatusOK)
			var p listPage
			r.JSON(t, &p)
			pages++
			for _, x := range p.Topics {
				names = append(names, x.Name)
			}
			for _, x := range p.Groups {
				names = append(names, x.Name)
			}
			if p.NextCursor == "" {
				return names, pages
			}
			if pages > 10 {
				t.Fatalf("%s: no end of pages", path)
			}
			cursor = p.NextCursor
		}
	}
	for _, c := range []struct {
		path  string
		names []string
	}{{"/v1/topics", topics}, {"/v1/groups", groups}} {
		if c.path == "/v1/groups" && !consumption {
			continue
		}
		got, pages := walk(c.path, 2)
		if !slices.Equal(got, c.names) || pages != (len(c.names)+1)/2 {
			t.Fatalf("%s by 2: %v in %d pages, want %v", c.path, got, pages, c.names)
		}
		// No parameters: the first (generous) page, everything, no cursor.
		r := s.do(t, "GET", c.path, nil)
		var p listPage
		r.JSON(t, &p)
		if p.NextCursor != "" || len(p.Topics)+len(p.Groups) != len(c.names) {
			t.Fatalf("%s without parameters: %s", c.path, r.Body)
		}
		wantProblem(t, s.do(t, "GET", c.path+"?limit=0", nil), http.StatusBadRequest, "limit")
		wantProblem(t, s.do(t, "GET", c.path+"?limit=", nil), http.StatusBadRequest, "limit")
		wantProblem(t, s.do(t, "GET", c.path+"?limit=1001", nil), http.StatusBadRequest, "limit")
		wantProblem(t, s.do(t, "GET", c.path+"?cursor=not.a.name", nil), http.StatusBadRequest, "cursor")
	}

	// A topic deleted between pages neither repeats nor shifts the rest.
	r = s.do(t, "GET", "/v1/topics?limit=2", nil)
	var p listPage
	r.JSON(t, &p)
	want(t, s.do(t, "DELETE", "/v1/topics/t1", nil), http.StatusNoContent)
	r = s.do(t, "GET", "/v1/topics?limit=2&cursor="+p.NextCursor, nil)
	r.JSON(t, &p)
	if len(p.Topics) != 2 || p.Topics[0].Name != "t2" || p.Topics[1].Name != "t3" {
		t.Fatalf("after deleting t1: %s", r.Body)
	}
}
