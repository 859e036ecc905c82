package consumer

// Parking (RocketMQ PullRequestHoldService holds a pull on the broker, so
// an idle queue costs the client nothing but the request object): a queue
// whose pull found nothing new waits for an arrival on its goroutine for
// at most LongPollingHold; if none came, the goroutine ends and the
// pullRequest is parked with the engine (MessageReader.AfterArrival),
// which starts a pull goroutine again when a message arrives. A nudge
// that needs the pull goroutine (SetPrefetch lowering the window below
// what is cached: trim.go) starts it too. A dropped queue's parked
// wake-up is cancelled. So a mostly idle gateway with tens of thousands
// of queues holds no goroutine, stack or timer per idle queue, and wakes
// for none of them.
//
// Locking: pullRequest.parkMu guards parked and unpark; it is taken after
// PushConsumer.mu and before the engine's arrival lock (unpark). The
// engine runs the wake-up on a goroutine of its own, with no lock held.

// park parks pr after an idle hold, from its pull goroutine: true means
// the goroutine must end (parked, or pr dropped); false means pull again
// (something arrived or a nudge came meanwhile).
func (c *PushConsumer) park(pr *pullRequest) bool {
	pr.parkMu.Lock()
	defer pr.parkMu.Unlock()
	select {
	case <-pr.stop:
		return true
	case <-pr.nudge:
		return false
	default:
	}
	return c.parkLocked(pr)
}

// parkNew parks a newly owned queue that has nothing to read from its
// start (rebalance, with PushConsumer.mu held), so that taking on
// thousands of idle queues (a start-up) starts no goroutine for them;
// false: start its pull goroutine.
func (c *PushConsumer) parkNew(pr *pullRequest) bool {
	pr.parkMu.Lock()
	defer pr.parkMu.Unlock()
	return c.parkLocked(pr)
}

// parkLocked registers pr's wake-up with the engine (pr.parkMu held);
// false when something is already there to read.
func (c *PushConsumer) parkLocked(pr *pullRequest) bool {
	stop, parked := c.deps.Reader.AfterArrival(pr.mq, pr.nextOffset, func() { c.unparkPull(pr) })
	if !parked {
		return false
	}
	pr.parked, pr.unpark = true, stop
	c.stats.parks.Add(1)
	return true
}

// unparkPull starts pr's pull goroutine again if it is parked (an arrival
// or a nudge). The WaitGroup is added to under parkMu, so a shutdown
// (which clears parked under parkMu before it waits) never misses it.
func (c *PushConsumer) unparkPull(pr *pullRequest) {
	pr.parkMu.Lock()
	defer pr.parkMu.Unlock()
	if !pr.parked {
		return
	}
	pr.parked = false
	pr.unpark()
	pr.unpark = nil
	c.pulls.Add(1)
	go c.pullLoop(pr)
}

// forgetParked cancels the wake-up of a dropped pr (its stop is closed).
func (pr *pullRequest) forgetParked() {
	pr.parkMu.Lock()
	defer pr.parkMu.Unlock()
	if pr.parked {
		pr.parked = false
		pr.unpark()
		pr.unpark = nil
	}
}

// isParked reports whether pr is parked (Status).
func (pr *pullRequest) isParked() bool {
	pr.parkMu.Lock()
	defer pr.parkMu.Unlock()
	return pr.parked
}
