"""The last segment of a model test id that is no flow's name alone: what the model tier's own
path runs (``models/<source>/<model>/<segment>``). Light on purpose: readers of reports (the
portal, ``ckit show``) tell the training steps apart without importing torch."""

from __future__ import annotations

#: The flow run in the model tier's own eager path; every other goes through ``kit.flows``.
EAGER = "eager"
#: A model's training step, ``models/<source>/<model>/train`` (``kit.tiers.models.training``),
#: run on the eager path.
TRAIN = "train"
