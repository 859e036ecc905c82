package main

import (
	"context"
	"io"
)

func consumeMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("not yet")
}
