"""Pool: the CCD-aware work-stealing pool, and the process's default pool.

A Pool owns its worker threads (one per core of its topology, pinned) and,
unless monitor=False, a monitor that watches the traffic of every index and
table searched through it and re-places their keys on the CCDs when the
traffic drifts. Many indexes and many Python threads share one pool; that is
the point: the machine is never oversubscribed.
"""

import json
import numbers
import threading

from . import swigfaiss_ccd as _swig

POLICIES = ("ccd", "flat", "rr")


class Pool:
    """Pool(topology="auto", policy="ccd", monitor=True, monitor_period=0.5)

    topology: "auto" (the FAISS_CCD_TOPOLOGY environment variable, else
        hwloc's L3 domains), "NxM" (N CCDs of M workers, e.g. "4x2") or CPU
        lists, one group per CCD ("0-3;4-7").
    policy: "ccd" (keys stay on their CCD, steal inside a CCD first),
        "flat" (topology-blind work stealing) or "rr" (round robin, no
        stealing).
    monitor: re-place keys as traffic drifts, checking every monitor_period
        seconds.

    Destroying the last reference waits for the pool's queued work to finish.
    """

    def __init__(self, topology="auto", policy="ccd", monitor=True,
                 monitor_period=0.5):
        if not isinstance(topology, str):
            raise TypeError("topology must be a str such as 'auto' or '4x2'")
        if not isinstance(policy, str):
            raise TypeError("policy must be a str: one of " + str(POLICIES))
        if policy not in POLICIES:
            raise ValueError(
                f"policy must be one of {POLICIES}, got {policy!r}")
        if not isinstance(monitor, bool):
            raise TypeError("monitor must be a bool")
        if isinstance(monitor_period, bool) or \
                not isinstance(monitor_period, numbers.Real):
            raise TypeError("monitor_period must be a number of seconds")
        self._handle = _swig.PoolHandle(
            topology, policy, monitor, float(monitor_period))

    def topology(self):
        """A readable description of the CCDs and their CPUs."""
        return self._handle.describe_topology()

    @property
    def policy(self):
        return self._handle.policy_name()

    @property
    def num_workers(self):
        return self._handle.num_workers()

    @property
    def num_ccds(self):
        return self._handle.num_ccds()

    def stats(self):
        """A dict: totals, "workers" (one dict per worker), steal ratios,
        "tasks_run_per_ccd", "epoch" (placement epoch) and "monitor" (per-CCD
        traffic "ccd_traffic" in bytes over the monitor's window, imbalance,
        re-maps; None without a monitor)."""
        return json.loads(self._handle.stats_json())

    def wait_idle(self):
        """Block until every task submitted so far has run."""
        self._handle.wait_idle()

    def __repr__(self):
        return (f"faiss_ccd.Pool(policy={self.policy!r}, "
                f"workers={self.num_workers}, ccds={self.num_ccds})")


_default_pool = None
_default_lock = threading.Lock()


def get_default_pool():
    """The pool that the parallel mode uses: the one given to
    set_default_pool(), else a Pool() made on first use."""
    global _default_pool
    with _default_lock:
        if _default_pool is None:
            _default_pool = Pool()
        return _default_pool


def set_default_pool(pool):
    """Make `pool` the default pool (None: a fresh Pool() on next use).
    Indexes already switched to the parallel mode move to it on their next
    search."""
    global _default_pool
    if pool is not None and not isinstance(pool, Pool):
        raise TypeError("pool must be a faiss_ccd.Pool or None")
    with _default_lock:
        _default_pool = pool
