package main

import "runtime/debug"

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version string

// Version is the build's version: the -ldflags value, else the module
// version recorded by the Go toolchain, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
