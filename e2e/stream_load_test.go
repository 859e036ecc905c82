package e2e

// A load probe of the streams (issue 22) against a running server, for
// profiling, not for published figures (cmd/mqbench has the stream modes
// the lead measures with). Skipped unless LOAD_ADDR is set:
//
//	go build -o /tmp/mqgate ./cmd/mqgate
//	/tmp/mqgate serve --addr 127.0.0.1:18090 --data /tmp/d --access-log=false &
//	LOAD_ADDR=127.0.0.1:18090 LOAD_PID=$! MQGATE_E2E_RACE=0 go test -v -run 'TestLoad' ./e2e
//
// LOAD_N messages (30,000), LOAD_WINDOW publishes in flight per producer
// (16), LOAD_Q a query for the consume streams, LOAD_PPROF a CPU profile
// URL fetched once the messages are published (written to
// /tmp/sload/cpu.pb.gz). Each test logs msgs/s and the server's CPU per
// message (from /proc/LOAD_PID/stat).

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func loadBase() string { return os.Getenv("LOAD_ADDR") }

func loadCPU(t *testing.T) time.Duration {
	pid, _ := strconv.Atoi(os.Getenv("LOAD_PID"))
	return procCPU(t, pid)
}

func loadREST(t *testing.T, method, path string, body any) []byte {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, "http://"+loadBase()+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return buf.Bytes()
}

func loadPublish(t *testing.T, topic string, n int) {
	body := strings.Repeat("x", 1024)
	for i := 0; i < n; i += 100 {
		var ms []map[string]any
		for j := 0; j < 100; j++ {
			ms = append(ms, map[string]any{"body": body})
		}
		loadREST(t, "POST", "/v1/topics/"+topic+"/messages/batch", map[string]any{"messages": ms})
	}
}

func TestLoadConsumeStream(t *testing.T) {
	if loadBase() == "" {
		t.Skip("set LOAD_ADDR to a running server")
	}
	t.Cleanup(client.CloseIdleConnections)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	n := int64(30000)
	if v, _ := strconv.Atoi(os.Getenv("LOAD_N")); v > 0 {
		n = int64(v)
	}
	name := "lc" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	loadREST(t, "PUT", "/v1/topics/"+name, map[string]any{"queues": 8})
	loadREST(t, "PUT", "/v1/groups/"+name, map[string]any{"subscriptions": []map[string]any{{"topic": name}}})
	loadPublish(t, name, int(n))
	if u := os.Getenv("LOAD_PPROF"); u != "" {
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				_ = os.MkdirAll("/tmp/sload", 0o755)
				f, _ := os.Create("/tmp/sload/cpu.pb.gz")
				f.ReadFrom(resp.Body)
				f.Close()
				resp.Body.Close()
			}
		}()
	}
	var got atomic.Int64
	var doneAt atomic.Int64
	cpu0 := loadCPU(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, _, err := websocket.Dial(ctx, "ws://"+loadBase()+"/v1/groups/"+name+"/stream"+os.Getenv("LOAD_Q"), &websocket.DialOptions{Subprotocols: []string{"mqgate.v1"}})
			if err != nil {
				t.Error(err)
				return
			}
			conn.SetReadLimit(64 << 20)
			defer conn.CloseNow()
			var f struct {
				Type     string `json:"type"`
				Messages []struct {
					ReceiptHandle string `json:"receiptHandle"`
				} `json:"messages"`
			}
			buf := make([]byte, 0, 256)
			for got.Load() < n {
				_, b, err := conn.Read(ctx)
				if err != nil {
					return
				}
				f.Messages = f.Messages[:0]
				f.Type = ""
				json.Unmarshal(b, &f)
				if f.Type != "messages" {
					continue
				}
				for _, m := range f.Messages {
					buf = append(buf[:0], `{"type":"ack","id":"a","receiptHandles":["`...)
					buf = append(buf, m.ReceiptHandle...)
					buf = append(buf, `"]}`...)
					if conn.Write(ctx, websocket.MessageText, buf) != nil {
						return
					}
					if got.Add(1) == n {
						doneAt.Store(time.Now().UnixNano())
						cancel()
					}
				}
			}
		}()
	}
	wg.Wait()
	el := time.Duration(doneAt.Load() - start.UnixNano())
	t.Logf("consume stream, 4 consumers, 1 ack/frame: %d msgs in %v = %.0f msgs/s | server CPU %v = %.1f us/msg", got.Load(), el, float64(got.Load())/el.Seconds(), loadCPU(t)-cpu0, float64((loadCPU(t)-cpu0).Microseconds())/float64(n))
}

func TestLoadConsumeREST(t *testing.T) {
	if loadBase() == "" {
		t.Skip("set LOAD_ADDR to a running server")
	}
	t.Cleanup(client.CloseIdleConnections)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	const n = 30000
	name := "lr" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	loadREST(t, "PUT", "/v1/topics/"+name, map[string]any{"queues": 8})
	loadREST(t, "PUT", "/v1/groups/"+name, map[string]any{"subscriptions": []map[string]any{{"topic": name}}})
	loadPublish(t, name, n)
	var got atomic.Int64
	cpu0 := loadCPU(t)
	start := time.Now()
	var wg sync.WaitGroup
	per := os.Getenv("LOAD_ACK_EACH") != ""
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got.Load() < n {
				var out struct {
					Messages []struct {
						ReceiptHandle string `json:"receiptHandle"`
					} `json:"messages"`
				}
				json.Unmarshal(loadREST(t, "POST", "/v1/groups/"+name+"/receive", map[string]any{"maxMessages": 32, "waitSeconds": 1}), &out)
				var hs []string
				for _, m := range out.Messages {
					hs = append(hs, m.ReceiptHandle)
				}
				if len(hs) == 0 {
					continue
				}
				if per {
					for _, h := range hs {
						loadREST(t, "POST", "/v1/groups/"+name+"/ack", map[string]any{"receiptHandles": []string{h}})
					}
				} else {
					loadREST(t, "POST", "/v1/groups/"+name+"/ack", map[string]any{"receiptHandles": hs})
				}
				got.Add(int64(len(hs)))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	t.Logf("REST 32-receive + ack (each=%v), 4 consumers: %d msgs in %v = %.0f msgs/s | server CPU %v = %.1f us/msg", per, got.Load(), el, float64(got.Load())/el.Seconds(), loadCPU(t)-cpu0, float64((loadCPU(t)-cpu0).Microseconds())/30000)
}

func TestLoadPublishStream(t *testing.T) {
	if loadBase() == "" {
		t.Skip("set LOAD_ADDR to a running server")
	}
	t.Cleanup(client.CloseIdleConnections)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	n := int64(30000)
	if v, _ := strconv.Atoi(os.Getenv("LOAD_N")); v > 0 {
		n = int64(v)
	}
	if u := os.Getenv("LOAD_PPROF"); u != "" {
		go func() {
			resp, err := http.Get(u)
			if err == nil {
				_ = os.MkdirAll("/tmp/sload", 0o755)
				f, _ := os.Create("/tmp/sload/cpu.pb.gz")
				f.ReadFrom(resp.Body)
				f.Close()
				resp.Body.Close()
			}
		}()
	}
	window, _ := strconv.Atoi(os.Getenv("LOAD_WINDOW"))
	if window == 0 {
		window = 16
	}
	name := "lp" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	loadREST(t, "PUT", "/v1/topics/"+name, map[string]any{"queues": 8})
	body := strings.Repeat("x", 1024)
	var sent atomic.Int64
	var confirmed atomic.Int64
	cpu0 := loadCPU(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for p := 0; p < 32; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, _, err := websocket.Dial(ctx, "ws://"+loadBase()+"/v1/topics/"+name+"/stream", &websocket.DialOptions{Subprotocols: []string{"mqgate.v1"}})
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.CloseNow()
			credits := make(chan struct{}, window)
			for i := 0; i < window; i++ {
				credits <- struct{}{}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					_, b, err := conn.Read(ctx)
					if err != nil {
						return
					}
					if bytes.Contains(b, []byte(`"confirm"`)) {
						confirmed.Add(1)
						credits <- struct{}{}
					} else if !bytes.Contains(b, []byte(`"open"`)) {
						t.Errorf("frame %s", b)
						return
					}
				}
			}()
			msg := []byte(`{"type":"publish","id":"p","message":{"body":"` + body + `"}}`)
			for sent.Add(1) <= n {
				<-credits
				if conn.Write(ctx, websocket.MessageText, msg) != nil {
					return
				}
			}
			for i := 0; i < window; i++ {
				<-credits
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	t.Logf("publish stream, 32 producers, window %d: %d confirmed in %v = %.0f msgs/s | server CPU %v = %.1f us/msg", window, confirmed.Load(), el, float64(confirmed.Load())/el.Seconds(), loadCPU(t)-cpu0, float64((loadCPU(t)-cpu0).Microseconds())/float64(n))
}

func TestLoadPublishREST(t *testing.T) {
	if loadBase() == "" {
		t.Skip("set LOAD_ADDR to a running server")
	}
	t.Cleanup(client.CloseIdleConnections)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	const n = 30000
	name := "lq" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	loadREST(t, "PUT", "/v1/topics/"+name, map[string]any{"queues": 8})
	body := strings.Repeat("x", 1024)
	var sent atomic.Int64
	cpu0 := loadCPU(t)
	start := time.Now()
	var wg sync.WaitGroup
	for p := 0; p < 32; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sent.Add(1) <= n {
				loadREST(t, "POST", "/v1/topics/"+name+"/messages", map[string]any{"body": body})
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	t.Logf("REST single publish, 32 producers: %d in %v = %.0f msgs/s | server CPU %v = %.1f us/msg", n, el, float64(n)/el.Seconds(), loadCPU(t)-cpu0, float64((loadCPU(t)-cpu0).Microseconds())/30000)
}
