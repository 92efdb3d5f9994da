"""The tiers of a run: one package per tier (deploy, unit, models, flows).

Each holds ``tier.py`` (its ``kit.tiers.interface.Tier``), ``cases.py`` (building, executing and
judging one test) and the pytest suite a worker collects; ``kit.tiers.registry`` lists them.
"""
