package main

import (
	"context"
	"io"
)

func latencyMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("not yet")
}
