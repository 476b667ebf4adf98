"""Load generators: how a service calls a search function.

    batches(search, xq, batch_size, ...)     one caller, B queries per call
    closed_loop(search, xq, clients, ...)    N client threads, each sends
                                             its next query when the last
                                             answered
    open_loop(search, xq, rate_qps, ...)     Poisson arrivals at a given
                                             rate, served by sender threads

`search(x)` takes a (n, d) float32 array and returns anything; FAISS
releases the GIL while it searches, so Python threads do load the index
concurrently. `thread_init()`, if given, runs once in every thread that
calls `search` before the clock starts (for per-thread settings such as
faiss.omp_set_num_threads, an OpenMP per-thread value).

Each returns a Run: per-call latencies, the wall time, the number of
queries served. An error in any thread stops the others and is raised in
the caller; nobody is left waiting.

Open-loop latency counts from the scheduled arrival, not from when a sender
got round to it, so a server that falls behind is charged for its queue
(no coordinated omission); the offered and achieved rates are both kept.

    turns(contenders, rounds, measure)       contenders taking turns
    add_arguments(parser, clients, load)     a script's "load" options
    check_arguments(parser, args)            and their validation
"""

import dataclasses
import threading
import time

import numpy as np

from . import evaluation

# Bounds on what one run may ask for: more threads than this is a typo (or
# a machine brought down), and so are arrival schedules or batches that
# would not fit in memory.
MAX_THREADS = 4096
MAX_ARRIVALS = 10 ** 8
MAX_BATCH_BYTES = 4 << 30


@dataclasses.dataclass
class Run:
    latencies_s: np.ndarray     # one per call, seconds
    wall_s: float               # first call started -> last call ended
    queries: int                # queries served (batch calls count B)
    offered_qps: float = None   # open loop: the arrival rate asked for

    @property
    def qps(self):
        return self.queries / self.wall_s if self.wall_s > 0 else 0.0

    def summary(self):
        """qps, ms_per_query, p50_ms, p99_ms, p999_ms (+ offered_qps)."""
        s = evaluation.summary(self.latencies_s, self.wall_s, self.queries)
        if self.offered_qps is not None:
            s["offered_qps"] = self.offered_qps
        return s


def _rows(xq):
    xq = np.ascontiguousarray(xq, dtype="float32")
    if xq.ndim != 2 or len(xq) == 0:
        raise ValueError(f"queries must be a non-empty 2-d array, got shape "
                         f"{xq.shape}")
    return xq


def _positive(name, v, kind=int, maximum=None):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer,
                                                 np.floating)) \
            or not v > 0 or not (isinstance(v, (int, np.integer))
                                 or np.isfinite(v)) \
            or (kind is int and int(v) != v):
        raise ValueError(f"{name} must be a finite positive "
                         f"{kind.__name__}, got {v!r}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name}={v!r} exceeds the {maximum} a load "
                         "generator allows")
    try:
        return kind(v)
    except OverflowError:
        raise ValueError(f"{name}={v!r} is too large") from None


def _callables(search, thread_init):
    if not callable(search):
        raise TypeError(f"search must be callable, search(x), got "
                        f"{search!r}")
    if thread_init is not None and not callable(thread_init):
        raise TypeError(f"thread_init must be callable or None, got "
                        f"{thread_init!r}")


def _limits(duration_s, calls):
    if (duration_s is None) == (calls is None):
        raise ValueError("give exactly one of duration_s and a call count")
    if duration_s is not None:
        return _positive("duration_s", duration_s, float), None
    return None, _positive("calls", calls)


def batches(search, xq, batch_size, duration_s=None, calls=None,
            thread_init=None):
    """One caller searching xq in consecutive batches of batch_size rows
    (wrapping round xq), until duration_s has passed or after `calls`
    calls. Latencies are per call."""
    _callables(search, thread_init)
    xq = _rows(xq)
    b = _positive("batch_size", batch_size)
    if b * xq.nbytes // len(xq) > MAX_BATCH_BYTES:
        raise ValueError(f"batch_size={b} queries of d={xq.shape[1]} would "
                         f"take {b * xq.nbytes / len(xq) / 2**30:.3g} GiB, "
                         f"over the {MAX_BATCH_BYTES >> 30} GiB a batch may "
                         "take")
    duration_s, calls = _limits(duration_s, calls)
    if thread_init:
        thread_init()
    # Batches larger than xq repeat it.
    reps = -(-b // len(xq)) + 1
    pool = np.concatenate([xq] * reps) if reps > 1 else xq
    lat, start, i = [], time.perf_counter(), 0
    while True:
        j = i % len(xq)
        x = pool[j:j + b]
        if len(x) < b:
            x = np.concatenate([x, xq[:b - len(x)]])
        s = time.perf_counter()
        search(x)
        e = time.perf_counter()
        lat.append(e - s)
        i += b
        if calls is not None and len(lat) >= calls:
            break
        if duration_s is not None and e - start >= duration_s:
            break
    return Run(np.asarray(lat), time.perf_counter() - start, b * len(lat))


class _Threads:
    """n threads that start together on a barrier, stop together on the
    first error (which join() raises), and report per-thread lists."""

    def __init__(self, n, body, thread_init, what="threads"):
        self.errors, self.stop = [], threading.Event()
        self.results = [None] * n
        self.barrier = threading.Barrier(n + 1)

        def run(t):
            try:
                if thread_init:
                    thread_init()
                self.barrier.wait()
                self.results[t] = body(t)
            except threading.BrokenBarrierError:
                pass
            except BaseException as e:        # re-raised by join()
                self.errors.append(e)
                self.stop.set()
                self.barrier.abort()

        self.threads = [threading.Thread(target=run, args=(t,), daemon=True)
                        for t in range(n)]
        for t, th in enumerate(self.threads):
            try:
                th.start()
            except RuntimeError as e:
                # Release the threads started so far, then say how many.
                self.stop.set()
                self.barrier.abort()
                for started in self.threads[:t]:
                    started.join()
                raise RuntimeError(f"{what}={n}: only {t} threads could "
                                   f"start ({e})") from e

    def start(self):
        """Release the threads. self.t0, the clock's start, is written
        before the barrier releases them, so every thread reads it set."""
        self.t0 = time.perf_counter()
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            pass

    def join(self):
        for th in self.threads:
            th.join()
        if self.errors:
            raise self.errors[0]


def closed_loop(search, xq, clients, duration_s=None, calls=None,
                thread_init=None):
    """`clients` threads, each searching one query at a time (client c
    starts at row c * len(xq) // clients and walks on), for duration_s
    seconds or `calls` calls per client."""
    _callables(search, thread_init)
    xq = _rows(xq)
    n = _positive("clients", clients, maximum=MAX_THREADS)
    duration_s, calls = _limits(duration_s, calls)

    def body(c):
        lat, i = [], c * len(xq) // n
        while not threads.stop.is_set():
            q = xq[i % len(xq):i % len(xq) + 1]
            s = time.perf_counter()
            search(q)
            e = time.perf_counter()
            lat.append(e - s)
            i += 1
            if calls is not None and len(lat) >= calls:
                break
            if duration_s is not None and e - threads.t0 >= duration_s:
                break
        return lat, time.perf_counter()

    threads = _Threads(n, body, thread_init, "clients")
    threads.start()
    threads.join()
    lat = np.concatenate([np.asarray(r[0]) for r in threads.results])
    end = max(r[1] for r in threads.results)
    return Run(lat, end - threads.t0, len(lat))


def poisson_arrivals(rate_qps, duration_s, seed=0):
    """Arrival times (seconds from 0) of a Poisson process of the given
    rate over duration_s: exponential gaps."""
    rate = _positive("rate_qps", rate_qps, float)
    duration = _positive("duration_s", duration_s, float)
    if rate * duration > MAX_ARRIVALS:
        raise ValueError(f"rate_qps={rate_qps!r} for duration_s="
                         f"{duration_s!r} is {rate * duration:.3g} arrivals, "
                         f"over the {MAX_ARRIVALS} a run may hold")
    rs = np.random.RandomState(seed)
    n = int(rate * duration * 1.2 + 10 * np.sqrt(rate * duration) + 10)
    t = np.cumsum(rs.exponential(1.0 / rate, n))
    while t[-1] < duration:               # a rare short draw: extend it
        t = np.concatenate([t, t[-1] + np.cumsum(
            rs.exponential(1.0 / rate, n))])
    return t[t < duration]


def open_loop(search, xq, rate_qps, duration_s, senders=64, seed=0,
              thread_init=None):
    """Queries arrive as a Poisson process of rate_qps for duration_s;
    `senders` threads take the arrivals in order, each sleeping until its
    next query's arrival time (if it is already late, it sends at once).
    Latency = answer time - scheduled arrival. Senders should outnumber
    the queries in flight, or their own queue becomes the bottleneck."""
    _callables(search, thread_init)
    xq = _rows(xq)
    n = _positive("senders", senders, maximum=MAX_THREADS)
    arrivals = poisson_arrivals(rate_qps, duration_s, seed)
    if len(arrivals) == 0:
        raise ValueError("no arrival in the window: raise the rate or the "
                         "duration")
    lock, nxt = threading.Lock(), [0]
    lat = np.full(len(arrivals), np.nan)

    def body(_):
        while not threads.stop.is_set():
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(arrivals):
                return time.perf_counter()
            due = threads.t0 + arrivals[i]
            # Event.wait, not sleep: an error elsewhere ends the wait.
            delay = due - time.perf_counter()
            if delay > 0 and threads.stop.wait(delay):
                return time.perf_counter()
            q = xq[i % len(xq):i % len(xq) + 1]
            search(q)
            lat[i] = time.perf_counter() - due
        return time.perf_counter()

    threads = _Threads(n, body, thread_init, "senders")
    threads.start()
    threads.join()
    end = max(threads.results)
    done = lat[~np.isnan(lat)]
    return Run(done, end - threads.t0, len(done),
               offered_qps=float(rate_qps))


def turns(contenders, rounds, measure):
    """Contenders taking turns: each round every contender is measured
    once, the order rotating by round so that none always goes first
    (after a cold cache) or last (after the others warmed the machine).
    contenders have a .name; returns {name: [measure(c) per round]}."""
    out = {c.name: [] for c in contenders}
    for r in range(rounds):
        k = r % len(contenders)
        for c in contenders[k:] + contenders[:k]:
            out[c.name].append(measure(c))
    return out


# ------------------------------------------------------ command-line options
def int_list(s):
    """argparse type: "1,8,32" -> [1, 8, 32]."""
    return [int(x) for x in s.split(",") if x]


def float_list(s):
    """argparse type: ".5,.9" -> [0.5, 0.9]."""
    return [float(x) for x in s.split(",") if x]


def add_arguments(parser, clients, load, batch=None):
    """The "load" option group the benchmark scripts share, with these
    defaults: --clients (closed loop), --load (open loop, fractions of the
    best stock closed-loop QPS), --batch if `batch` is given, --senders,
    --duration, --rounds. check_arguments() validates them."""
    aa = parser.add_argument_group("load").add_argument
    aa("--clients", type=int_list, default=list(clients),
       help="closed loop: client threads")
    aa("--load", type=float_list, default=list(load),
       help="open loop: fractions of the best stock closed-loop QPS")
    if batch is not None:
        aa("--batch", type=int_list, default=list(batch),
           help="one caller: batch sizes")
    aa("--senders", type=int, default=64, help="open loop: sender threads")
    aa("--duration", type=float, default=1.0,
       help="seconds per contender per scenario per round")
    aa("--rounds", type=int, default=3)


def check_arguments(parser, args):
    """parser.error() (exit 2, with the message) on a bad load option."""
    for name in ("rounds", "senders"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if not args.duration > 0:
        parser.error("--duration must be positive")
    if any(n < 1 for n in args.clients + getattr(args, "batch", [])):
        parser.error("--clients and --batch take positive ints")
    if any(not 0 < f <= 2 for f in args.load):
        parser.error("--load takes fractions in (0, 2]")

