package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc is a tribunal process the bench started (a worker or a server),
// with its memory sampled while it runs.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // file of its stderr and stdout

	mu     sync.Mutex
	maxRSS int64 // bytes, the largest VmRSS sampled
	hwm    int64 // bytes, VmHWM (the kernel's own peak) at the last sample
	exited chan struct{}
	err    error // how it exited
}

// startProc runs exe with args and env added to this process's environment,
// its output in dir/name.log.
func startProc(exe, dir, name string, env []string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("bench: %s log: %w", name, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	go p.sample(100 * time.Millisecond)
	return p, nil
}

// sample reads the process's memory every interval until it exits.
func (p *proc) sample(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.sampleOnce()
		select {
		case <-p.exited:
			return
		case <-t.C:
		}
	}
}

func (p *proc) sampleOnce() {
	rss, hwm, err := readMemory(p.cmd.Process.Pid)
	if err != nil {
		return // gone, or no /proc here: the figures stay unknown
	}
	p.mu.Lock()
	p.maxRSS, p.hwm = max(p.maxRSS, rss), max(p.hwm, hwm)
	p.mu.Unlock()
}

// RSS returns the process's resident memory now, in bytes.
func (p *proc) RSS() (int64, error) {
	rss, _, err := readMemory(p.cmd.Process.Pid)
	return rss, err
}

// Peak is the process's peak resident memory so far, in bytes: the
// kernel's high-water mark, or the largest sample where that is missing.
func (p *proc) Peak() int64 {
	p.sampleOnce()
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.hwm, p.maxRSS)
}

// Stop asks the process to shut down (SIGINT, as Ctrl-C: a worker hands
// its claimed items back) and kills it after timeout.
func (p *proc) Stop(timeout time.Duration) error {
	select {
	case <-p.exited:
		return p.exitErr()
	default:
	}
	p.sampleOnce()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		return fmt.Errorf("bench: stop %s: %w", p.name, err)
	}
	select {
	case <-p.exited:
		return p.exitErr()
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("bench: %s did not stop within %s; killed", p.name, timeout)
	}
}

// exitErr says how the process ended, with the end of its log when it failed.
func (p *proc) exitErr() error {
	if p.err == nil {
		return nil
	}
	tail, _ := os.ReadFile(p.log)
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	return fmt.Errorf("bench: %s: %w\n%s", p.name, p.err, bytes.TrimSpace(tail))
}

// alive returns an error when the process has exited already.
func (p *proc) alive() error {
	select {
	case <-p.exited:
		if err := p.exitErr(); err != nil {
			return err
		}
		return fmt.Errorf("bench: %s exited", p.name)
	default:
		return nil
	}
}

// readMemory reads VmRSS and VmHWM from /proc/PID/status, in bytes.
func readMemory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: read %s: %w", key, err)
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("bench: no VmRSS in /proc status")
	}
	return rss, hwm, sc.Err()
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("bench: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady polls a server's /readyz until it answers 200, it exits, or
// ctx ends.
func waitReady(ctx context.Context, p *proc, base string) error {
	for {
		if err := p.alive(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: wait for %s: %w", p.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
