package consumer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mqgate/mqgate/core"
)

func queues(n int) []core.MessageQueue {
	out := make([]core.MessageQueue, n)
	for i := range out {
		out[i] = core.MessageQueue{Topic: "t", QueueID: i}
	}
	return out
}

func ids(qs []core.MessageQueue) []int {
	out := []int{}
	for _, q := range qs {
		out = append(out, q.QueueID)
	}
	return out
}

func TestAllocate(t *testing.T) {
	cids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("c%d", i)
		}
		return out
	}
	cases := []struct {
		name     string
		strategy AllocateStrategy
		queues   int
		clients  int
		want     [][]int
	}{
		{"avg 8/3", AllocateAveragely, 8, 3, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}}},
		{"avg 8/2", AllocateAveragely, 8, 2, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}},
		{"avg 8/1", AllocateAveragely, 8, 1, [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}},
		{"avg 2/3", AllocateAveragely, 2, 3, [][]int{{0}, {1}, {}}},
		{"avg 10/4", AllocateAveragely, 10, 4, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}, {8, 9}}},
		{"avg 0/2", AllocateAveragely, 0, 2, [][]int{{}, {}}},
		{"circle 8/3", AllocateAveragelyByCircle, 8, 3, [][]int{{0, 3, 6}, {1, 4, 7}, {2, 5}}},
		{"circle 2/3", AllocateAveragelyByCircle, 2, 3, [][]int{{0}, {1}, {}}},
		{"circle 4/4", AllocateAveragelyByCircle, 4, 4, [][]int{{0}, {1}, {2}, {3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			all := cids(tc.clients)
			seen := map[int]int{}
			for i, cid := range all {
				got := ids(tc.strategy(cid, queues(tc.queues), all))
				if !slices.Equal(got, tc.want[i]) {
					t.Errorf("%s: got %v want %v", cid, got, tc.want[i])
				}
				for _, q := range got {
					seen[q]++
				}
			}
			for q := 0; q < tc.queues; q++ {
				if seen[q] != 1 {
					t.Errorf("queue %d allocated %d times", q, seen[q])
				}
			}
		})
	}
	if got := AllocateAveragely("stranger", queues(4), cids(2)); got != nil {
		t.Errorf("unknown client got %v", got)
	}
	if got := AllocateAveragelyByCircle("stranger", queues(4), cids(2)); got != nil {
		t.Errorf("unknown client got %v", got)
	}
}
