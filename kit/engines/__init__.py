"""Where the shards of a run execute: a real Slurm engine, and templates for other schedulers.

The kit writes no scheduler of its own. Every engine runs the same two commands from
``interface.ShardedRun``: ``ckit run --shard K/N`` for each shard, then one ``ckit merge``.
"""
