package main

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger builds the process logger: JSON lines by default, a pretty
// console format when asked or (auto) when w is a terminal.
func newLogger(w io.Writer, level, format string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00"
	zerolog.DurationFieldUnit = time.Millisecond
	if format == "console" || (format == "auto" && isTerminal(w)) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// newServerLogger is newLogger for a running server: JSON lines are
// buffered and written in batches (logwriter.go) so a busy server does
// not make a system call per request line; the console format, for
// people watching a terminal, stays unbuffered. Close the returned
// writer (nil for the console) last, to write what is pending.
func newServerLogger(w io.Writer, level, format string) (zerolog.Logger, *logWriter) {
	if format == "console" || (format == "auto" && isTerminal(w)) {
		return newLogger(w, level, format), nil
	}
	lw := newLogWriter(w)
	return newLogger(lw, level, "json"), lw
}
