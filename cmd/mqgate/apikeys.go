package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/internal/auth"
)

// keyReloader reloads the --api-keys file on SIGHUP, so keys are added,
// revoked or re-granted without a restart (and without polling the file).
// A file that fails to load is logged and the keys in force stay.
// Owned by Main: started in Run, stopped in Close.
type keyReloader struct {
	sig  chan os.Signal
	stop chan struct{}
	done chan struct{}
}

func startKeyReloader(kr *auth.Keyring, log zerolog.Logger) *keyReloader {
	r := &keyReloader{sig: make(chan os.Signal, 1), stop: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(r.sig, syscall.SIGHUP)
	go r.loop(kr, log)
	return r
}

func (r *keyReloader) loop(kr *auth.Keyring, log zerolog.Logger) {
	defer close(r.done)
	for {
		select {
		case <-r.stop:
			return
		case <-r.sig:
			ks, err := kr.Reload()
			if err != nil {
				log.Error().Err(err).Msg("API keys not reloaded; the keys in force stay")
				continue
			}
			limited := 0
			for _, k := range ks.All() {
				if k.Limits != nil {
					limited++
				}
			}
			log.Info().Str("file", kr.File()).Int("keys", ks.Len()).Int("withLimits", limited).Msg("API keys reloaded")
		}
	}
}

// Close stops listening for SIGHUP and waits for the loop to end. After
// it, SIGHUP has its default effect again (the process ends).
func (r *keyReloader) Close() {
	signal.Stop(r.sig)
	close(r.stop)
	<-r.done
}
