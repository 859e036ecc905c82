package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// disk measures the floor under every durable publish: the latency of
// the machine's own fdatasync, paced as the latency mode paces
// publishes. The gateway answers a publish, and lets it be received, once
// one fdatasync of its log-ahead has returned, so its publish→receive p99
// cannot beat this p99 measured on the same disk in the same session
// (these machines share their disks: it moves by several times within
// an hour). Each write overwrites allocated bytes of a zero-filled file,
// as the log-ahead's do, so no sync pays for a change of size.

type diskConfig struct {
	Dir      string
	Rate     int
	Duration time.Duration
	Size     int
	Runs     int
	JSON     bool
}

// DiskReport is the disk mode's output.
type DiskReport struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config"`
	Runs   []DiskRun      `json:"runs"`
	Median DiskRun        `json:"median"`
}

// DiskRun is one run: the distribution of its fdatasyncs.
type DiskRun struct {
	Syncs  LatencySummary `json:"syncs"`
	P999Ms float64        `json:"p999Ms"`
}

func diskMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("disk", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c diskConfig
	fs.StringVar(&c.Dir, "dir", ".", "directory on the disk to measure (the gateway's data directory's file system)")
	fs.IntVar(&c.Rate, "rate", 1000, "writes+fdatasyncs per second, spread evenly")
	fs.DurationVar(&c.Duration, "duration", 5*time.Second, "measured time per run")
	fs.IntVar(&c.Size, "size", 1200, "bytes per write (a 1 KiB message's log record is about 1.2 KB)")
	fs.IntVar(&c.Runs, "runs", 3, "runs; the report gives their medians")
	fs.BoolVar(&c.JSON, "json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.Rate < 1 || c.Runs < 1 || c.Size < 1:
		return usagef("--rate, --runs and --size must be at least 1")
	case c.Duration <= 0:
		return usagef("--duration must be positive")
	}
	rep := DiskReport{Mode: "disk", Config: map[string]any{"dir": c.Dir, "rate": c.Rate, "durationSec": c.Duration.Seconds(), "size": c.Size, "runs": c.Runs}}
	for range c.Runs {
		r, err := runDisk(ctx, c)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, r)
		if ctx.Err() != nil {
			break
		}
	}
	rep.Median = medianDisk(rep.Runs)
	if c.JSON {
		return writeJSON(stdout, rep)
	}
	writeConfig(stdout, rep.Config)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "\tsyncs\tp50\tp90\tp99\tp99.9\tmax\t")
	row := func(name string, r DiskRun) {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", name, r.Syncs.Count, r.Syncs.P50Ms, r.Syncs.P90Ms, r.Syncs.P99Ms, r.P999Ms, r.Syncs.MaxMs)
	}
	for i, r := range rep.Runs {
		row(fmt.Sprintf("run %d", i+1), r)
	}
	row("median", rep.Median)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, "(fdatasync latencies in ms, each after one write of --size bytes)")
	return err
}

// runDisk writes and syncs at the paced rate for the run's duration.
func runDisk(ctx context.Context, c diskConfig) (DiskRun, error) {
	n := int(c.Duration.Seconds()*float64(c.Rate)) + 1
	f, err := os.CreateTemp(c.Dir, "mqbench-disk-*")
	if err != nil {
		return DiskRun{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(make([]byte, n*c.Size+4096)); err != nil {
		return DiskRun{}, err
	}
	if err := f.Sync(); err != nil {
		return DiskRun{}, fmt.Errorf("sync %s: %w", filepath.Base(f.Name()), err)
	}
	buf := make([]byte, c.Size)
	for i := range buf {
		buf[i] = byte(i)
	}
	lat := make([]time.Duration, 0, n)
	tick := time.NewTicker(time.Second / time.Duration(c.Rate))
	defer tick.Stop()
	end := time.Now().Add(c.Duration)
	for off := int64(0); time.Now().Before(end); off += int64(c.Size) {
		select {
		case <-ctx.Done():
			end = time.Time{}
			continue
		case <-tick.C:
		}
		t0 := time.Now()
		if _, err := f.WriteAt(buf, off); err != nil {
			return DiskRun{}, err
		}
		if err := fdatasync(f); err != nil {
			return DiskRun{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	s := summarize(lat)
	return DiskRun{Syncs: s, P999Ms: ms(percentile(lat, 99.9))}, nil
}

func medianDisk(runs []DiskRun) DiskRun {
	return DiskRun{
		Syncs:  medianLatencyOf(runs, func(r DiskRun) LatencySummary { return r.Syncs }),
		P999Ms: medianOf(runs, func(r DiskRun) float64 { return r.P999Ms }),
	}
}
