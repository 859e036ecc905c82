//go:build !linux

package store

import "os"

func startWriteback(*os.File) {}
