"""The isolated runner: an orchestrator that feeds stable test ids to long-lived pytest workers.

A worker is a pytest session (the tier suites collected once, ``import torch`` paid once) that
runs the tests it is sent one at a time. A crash or hang kills only the worker: the orchestrator
records CRASH/TIMEOUT for the test in flight, starts a fresh worker and goes on. Every finished
test is journaled at once, so a killed orchestrator resumes without losing one.
"""
