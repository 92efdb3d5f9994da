"""Imported first by the fork server the ranks come from, for what it does on import: the
server asks to die with the worker that started it (``kit.tiers.distributed.rank_start``).

A rank asks to die with its parent, the server, but ``multiprocessing``'s server outlives its
worker while any of its children lives (each holds the pipe whose closing tells the server its
clients are gone): without this, a hung rank would keep the server alive, and the server the
rank, after their worker died. Nothing else imports this module.
"""

from __future__ import annotations

from kit.tiers.distributed.rank_start import die_with_parent

die_with_parent()
