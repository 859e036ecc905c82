// Command lazyfs mounts a backing directory with internal/lazyfs, the
// filesystem that forgets what was not synced, and lets another process
// cut the power: for runs by hand against a real binary.
//
//	lazyfs -backing /tmp/disk -mount /tmp/mnt [-control 127.0.0.1:7077]
//
// Control (loopback only):
//
//	curl -X POST '127.0.0.1:7077/cut?keep=0.3&tear=1'   cut: every operation fails from now on
//	curl -X POST 127.0.0.1:7077/hold                    fsyncs wait for the next cut
//	curl -X POST 127.0.0.1:7077/remount                 after the processes using it are gone
//	curl 127.0.0.1:7077/stats
//
// SIGUSR1 cuts too; SIGINT or SIGTERM unmounts and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/mqgate/mqgate/internal/lazyfs"
)

func main() {
	backing := flag.String("backing", "", "the backing directory (holds what survives a cut)")
	mnt := flag.String("mount", "", "the mount point")
	control := flag.String("control", "127.0.0.1:7077", "the control listener (loopback only)")
	flag.Parse()
	if *backing == "" || *mnt == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*backing, *mnt, *control); err != nil {
		fmt.Fprintln(os.Stderr, "lazyfs:", err)
		os.Exit(1)
	}
}

type mount struct {
	mu      sync.Mutex
	fs      *lazyfs.FS
	backing string
	mnt     string
}

func (m *mount) current() *lazyfs.FS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fs
}

func (m *mount) remount() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fs.Unmount(); err != nil {
		return err
	}
	fs, err := lazyfs.Mount(m.backing, m.mnt)
	if err != nil {
		return err
	}
	m.fs = fs
	return nil
}

func run(backing, mnt, control string) error {
	host, _, err := net.SplitHostPort(control)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-control %s: the control listener must be on a loopback address", control)
	}
	fs, err := lazyfs.Mount(backing, mnt)
	if err != nil {
		return err
	}
	m := &mount{fs: fs, backing: backing, mnt: mnt}
	ln, err := net.Listen("tcp", control)
	if err != nil {
		_ = fs.Unmount()
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /remount", func(w http.ResponseWriter, r *http.Request) {
		if err := m.remount(); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		fmt.Fprintln(w, "mounted")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { m.current().Handler().ServeHTTP(w, r) })
	srv := &http.Server{Handler: mux}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Printf("lazyfs: %s mounted on %s; control on http://%s", backing, mnt, ln.Addr())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	for {
		select {
		case err := <-served:
			_ = m.current().Unmount()
			return err
		case sig := <-sigs:
			if sig == syscall.SIGUSR1 {
				rep, err := m.current().Cut(lazyfs.CutOptions{})
				log.Printf("lazyfs: power cut: %+v %v", rep, err)
				continue
			}
			_ = srv.Shutdown(context.Background())
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Print(err)
			}
			return m.current().Unmount()
		}
	}
}
