"""``ckit golden check``: a run's golden artifacts (``kit.golden``) re-run with the reference
runtimes and judged by each flow's criterion as the standard's tiers declare it.

Apart from ``kit.golden``, which the judge writes the artifacts with below the tiers: the check
reads the tiers' criteria, and the repository's audit and ``ckit golden check`` run it.
"""
