"""The tiers of a run: one package per tier (deploy, unit, models, flows), each holding its logic
and the pytest suite a worker collects."""
