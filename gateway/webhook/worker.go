package webhook

import "time"

// work is one worker: it takes jobs from the FIFO until the queue is empty,
// the pusher closes or the worker set is above maxInFlight. While a
// Retry-After pause holds the group it waits on cond; the pause timer
// wakes it.
func (p *Pusher) work() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.closed || p.workers > p.cfg.maxInFlight || p.queue.len() == 0 {
			p.workers--
			return
		}
		if time.Now().Before(p.pausedUntil) {
			p.cond.Wait()
			continue
		}
		j := p.queue.pop()
		p.queuedMsgs -= j.len()
		p.running++
		p.mu.Unlock()
		p.run(j)
		p.mu.Lock()
		p.running--
	}
}

// run posts one job and answers its messages.
func (p *Pusher) run(j job) {
	if !j.d.Orderly {
		msgs := j.d.Msgs[j.lo:j.hi]
		r := p.post(msgs)
		p.answer(j, r)
		return
	}
	// ORDERLY: chunks in queue order, one request at a time. On a failure
	// that chunk and every later message go back (the consume service
	// suspends the queue and redelivers them in order,
	// SUSPEND_CURRENT_QUEUE_A_MOMENT); nothing after a failure is posted.
	p.mu.Lock()
	bs := p.cfg.batchSize
	p.mu.Unlock()
	for lo := j.lo; lo < j.hi; lo += bs {
		if lo > j.lo && !p.waitTurn() {
			rest := job{d: j.d, lo: lo, hi: j.hi}
			p.account(false, rest.len())
			rest.nack(0)
			return
		}
		chunk := job{d: j.d, lo: lo, hi: min(lo+bs, j.hi)}
		r := p.post(j.d.Msgs[chunk.lo:chunk.hi])
		p.answer(chunk, r)
		if !r.ok {
			rest := job{d: j.d, lo: chunk.hi, hi: j.hi}
			p.account(false, rest.len())
			rest.nack(r.level)
			return
		}
	}
}

// waitTurn waits out a Retry-After pause between the chunks of an orderly
// job; false when the pusher closed meanwhile.
func (p *Pusher) waitTurn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.closed && time.Now().Before(p.pausedUntil) {
		p.cond.Wait()
	}
	return !p.closed
}

// answer acks or nacks the messages of one request.
func (p *Pusher) answer(j job, r result) {
	// Already counted by finish: once answered, the consumer (and whoever
	// reads Status next) may see the outcome.
	for i := j.lo; i < j.hi; i++ {
		if r.ok {
			j.d.Ack(i)
		} else {
			j.d.NackReason(i, r.level, r.reason)
		}
	}
}

// pauseLocked holds the group's pushing until `until` (Retry-After). One
// timer, re-armed to the latest end, wakes the workers.
func (p *Pusher) pauseLocked(until time.Time) {
	if p.closed || !until.After(p.pausedUntil) {
		return
	}
	p.pausedUntil = until
	d := time.Until(until)
	if p.pauseTimer == nil {
		p.pauseTimer = time.AfterFunc(d, p.pauseEnded)
	} else {
		p.pauseTimer.Reset(d)
	}
}

// pauseEnded is the pause timer's function.
func (p *Pusher) pauseEnded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if d := time.Until(p.pausedUntil); d > 0 {
		// The pause was extended after the timer fired.
		p.pauseTimer.Reset(d)
		return
	}
	p.cond.Broadcast()
	p.log.Info().Msg("webhook pause (Retry-After) over, pushing again")
}
